// How a message spells a Loopgate command for the user to type. The spelling of
// the CLI itself (`loopgate`, or `node '/abs/dist/cli.js'`) is found by
// cli/invocation.ts; the proxy, doctor and the CLI's messages build lines here,
// so each reads as the banner does and can be pasted as it is. Pure.
import { DEFAULT_HOST, DEFAULT_PORT } from '../../core/options.js';

/** The spelling when nothing tells how this install is reached (a proxy embedded in-process): the installed command. */
export const INSTALLED_COMMAND = 'loopgate';

/** A Loopgate command line: `loopgate token`, or `node '/abs/dist/cli.js' token`. */
export function commandLine(cli: string, args: string): string {
  return `${cli} ${args}`;
}

/**
 * What a command that talks to the proxy needs to find one that is not on the default address:
 * '' on 127.0.0.1:8787, else ` --port N` (and ` --host ADDR`). Every message that names such a
 * command (`env`, `tail`, `show`, `run`, `doctor`) appends it, so following the advice reaches this proxy.
 */
export function proxyFlags(host: string, port: number): string {
  return (port === DEFAULT_PORT ? '' : ` --port ${port}`) + (host === DEFAULT_HOST ? '' : ` --host ${host}`);
}
