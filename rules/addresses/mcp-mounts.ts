// `serve --mcp NAME=URL`: which HTTP MCP servers the proxy mounts at /mcp/NAME.
// Each flag is checked here, with what to fix when it is wrong. Pure.

/** A name that is one path segment and reads the same in a record, a span and a terminal. */
const MOUNT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export type McpMounts = { ok: true; servers: Map<string, URL> } | { ok: false; problem: string };

export function parseMcpMounts(flags: readonly string[] | undefined): McpMounts {
  const servers = new Map<string, URL>();
  for (const flag of flags ?? []) {
    const eq = flag.indexOf('=');
    const name = eq < 0 ? '' : flag.slice(0, eq);
    const raw = eq < 0 ? '' : flag.slice(eq + 1);
    if (!MOUNT_NAME.test(name))
      return {
        ok: false,
        problem: `--mcp ${JSON.stringify(flag)}: give NAME=URL, NAME of letters, digits, _ and - (e.g. --mcp files=http://127.0.0.1:3001/mcp).`,
      };
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return {
        ok: false,
        problem: `--mcp ${name}=…: ${JSON.stringify(raw)} is no URL (e.g. http://127.0.0.1:3001/mcp).`,
      };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { ok: false, problem: `--mcp ${name}: the URL must be http:// or https:// (got ${url.protocol}).` };
    if (url.username || url.password)
      return {
        ok: false,
        problem: `--mcp ${name}: leave credentials out of the URL (they would be shown and logged).`,
      };
    if (servers.has(name)) return { ok: false, problem: `--mcp ${name} is given twice: one URL per name.` };
    url.search = '';
    url.hash = '';
    servers.set(name, url);
  }
  return { ok: true, servers };
}
