// One-time console hints: what the user should fix in their tool so the proxy
// no longer has to rewrite its requests. The wording is a pure rule
// (rules/addresses/client-hints.ts); this only supplies the proxy's origin and the client.
import type { IncomingHttpHeaders } from 'node:http';
import type { Rewrite } from '../../rules/addresses/paths.js';
import { identifyClient, rewriteHint as wordRewriteHint } from '../../rules/addresses/client-hints.js';
import type { GuardConfig } from './guard.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../../core/options.js';

/** The hint and its once-only id (per client convention: two clients can need different advice). */
export function rewriteHint(
  rewrite: Rewrite,
  guard: GuardConfig,
  headers: IncomingHttpHeaders,
): { id: string; message: string } | undefined {
  const origin = [...guard.allowedOrigins][0] ?? `http://${DEFAULT_HOST}:${DEFAULT_PORT}`;
  const client = identifyClient(headers);
  const message = wordRewriteHint(rewrite, origin, client);
  return message === undefined
    ? undefined
    : { id: `rewrite:${rewrite.reason}:${client ?? '?'}:${rewrite.from}`, message };
}
