// What is a request, for the log, the console (and the editor's output channel and status bar), the
// OTLP export, the traffic ring (`loopgate tail`/`show`, the Traffic view): one answer for all of them.
// Loopgate's own API under /_loopgate/ (the health proof, `tail`'s live feed, `show`, `run`'s stats,
// the editor's polls) and the connectivity probes of `/` are Loopgate talking to itself, not a tool's
// traffic: a team's HAR holds the team's requests. `serve --log-own` puts them back, everywhere at once. Pure.

import { LOCAL_API_PREFIX } from '../../core/local-api.js';

/** `path` is the request path as normalised (or the URL as sent, before normalising), query included or not. */
export function isOwnTraffic(method: string, path: string): boolean {
  const bare = path.split('?', 1)[0]!;
  if (bare === LOCAL_API_PREFIX.slice(0, -1) || bare.startsWith(LOCAL_API_PREFIX)) return true;
  // What a client or an editor sends to see whether anything listens, before it has a token.
  return (bare === '/' && (method === 'GET' || method === 'HEAD')) || (bare === '/api/hello' && method === 'HEAD');
}
