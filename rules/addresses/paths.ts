// Canonicalises the path of each request a local tool sends to the proxy.
// Pure: takes the raw request target, returns the path to forward and the
// rewrites applied, or a 400 reason for targets that could escape the upstream.

import { ENDPOINT_SUFFIXES, KNOWN_ENDPOINTS } from './urls.js';

export type RewriteReason =
  'collapsed-slashes' | 'duplicate-v1' | 'missing-v1' | 'duplicate-endpoint' | 'trailing-slash';

export interface Rewrite {
  reason: RewriteReason;
  from: string;
  to: string;
}

export type PathResult = { ok: true; path: string; query: string; rewrites: Rewrite[] } | { ok: false; reason: string };

const KNOWN_ROOTS = new Set(KNOWN_ENDPOINTS.map((e) => e.split('/')[1]!));

/** The endpoint (from ENDPOINT_SUFFIXES) that `rest` starts with, on a segment boundary. */
function leadingEndpoint(rest: string): string | undefined {
  const lower = rest.toLowerCase();
  return ENDPOINT_SUFFIXES.find((e) => lower === e || lower.startsWith(e + '/'));
}

function stripLeadingV1(rest: string): { rest: string; count: number } {
  let count = 0;
  while (rest.toLowerCase() === '/v1' || rest.toLowerCase().startsWith('/v1/')) {
    rest = rest.slice(3);
    count++;
  }
  return { rest, count };
}

/** Why a raw request target is refused, or undefined when it is safe to parse. */
function unsafeTargetReason(method: string, target: string): string | undefined {
  if (method.toUpperCase() === 'CONNECT') return 'CONNECT is not supported: Loopgate forwards to one fixed upstream.';
  if (!target.startsWith('/')) {
    return 'Absolute-form request targets are refused: configure your tool with the proxy as its base URL, not as an HTTP proxy.';
  }
  const pathPart = target.split('?', 1)[0]!;
  if (/%2f|%5c|\\/i.test(pathPart)) return 'Encoded slashes and backslashes are not allowed in the request path.';
  const segments = pathPart.split('/').map((s) => s.replace(/%2e/gi, '.'));
  if (segments.some((s) => s === '..' || s === '.'))
    return 'Dot segments ("..", ".") are not allowed in the request path.';
  return undefined;
}

export function normaliseRequestPath(method: string, target: string): PathResult {
  const unsafe = unsafeTargetReason(method, target);
  if (unsafe) return { ok: false, reason: unsafe };
  const q = target.indexOf('?');
  const original = q === -1 ? target : target.slice(0, q);
  const query = q === -1 ? '' : target.slice(q);
  const rewrites: Rewrite[] = [];
  let path = original;

  const step = (reason: RewriteReason, next: string) => {
    if (next !== path) rewrites.push({ reason, from: path, to: next });
    path = next;
  };

  step('collapsed-slashes', path.replace(/\/{2,}/g, '/'));
  if (path.length > 1) step('trailing-slash', path.replace(/\/+$/, ''));

  // A request address never contains /v1/v1, wherever the doubling sits.
  step('duplicate-v1', path.replace(/(\/v1)(?:\/v1)+(?=\/|$)/gi, '$1'));
  const lead = stripLeadingV1(path);

  // A base URL that already ended in an endpoint makes the SDK send
  // `/v1/chat/completions/chat/completions` or `/v1/messages/v1/messages`.
  let rest = lead.rest;
  for (let endpoint = leadingEndpoint(rest); endpoint; endpoint = leadingEndpoint(rest)) {
    const after = stripLeadingV1(rest.slice(endpoint.length));
    if (!leadingEndpoint(after.rest)) break;
    rest = after.rest;
  }
  if (rest !== lead.rest) step('duplicate-endpoint', (lead.count > 0 ? '/v1' : '') + rest);

  if (lead.count === 0) {
    const root = rest.split('/')[1] ?? '';
    if (KNOWN_ROOTS.has(root.toLowerCase()) || leadingEndpoint(rest)) step('missing-v1', '/v1' + rest);
  }
  return { ok: true, path, query, rewrites };
}

/** `FROM -> TO` for the x-loopgate-rewrite header: paths only, never the query. */
export function describeRewrites(rewrites: readonly Rewrite[]): string | undefined {
  if (rewrites.length === 0) return undefined;
  return `${rewrites[0]!.from} -> ${rewrites[rewrites.length - 1]!.to}`;
}
