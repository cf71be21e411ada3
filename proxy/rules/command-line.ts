// How a message spells a Loopgate command for the user to type. The spelling of
// the CLI itself (`loopgate`, or `node '/abs/dist/cli.js'`) is found by
// cli/invocation.ts; the proxy, doctor and the CLI's messages build lines here,
// so each reads as the banner does and can be pasted as it is. Pure.

/** The spelling when nothing tells how this install is reached (a proxy embedded in-process): the installed command. */
export const INSTALLED_COMMAND = 'loopgate';

/** A Loopgate command line: `loopgate token`, or `node '/abs/dist/cli.js' token`. */
export function commandLine(cli: string, args: string): string {
  return `${cli} ${args}`;
}
