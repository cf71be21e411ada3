// The health challenge: before a VS Code window sends the local token to a
// proxy already on its port, the proxy must prove it knows that token. The
// window sends a random nonce; the proxy answers HMAC-SHA256(token, …nonce…).
// The proxy's own address and port are part of the proof, so a program on
// another port, or on the same port of another loopback address (127.0.0.1
// vs ::1), cannot relay the challenge to the real proxy and pass its answer off.
import { createHmac } from 'node:crypto';
import type { SpanRecord } from '../../core/record.js';
import { LOCAL_PATHS } from '../../core/local-api.js';

/** Where the proxy answers the challenge (and, with the token, says what it serves). */
export const HEALTH_PATH = LOCAL_PATHS.health;
export const CHALLENGE_HEADER = 'x-loopgate-challenge';
export const PROOF_HEADER = 'x-loopgate-proof';

/** base64url of 16–96 random bytes: long enough to never repeat, short enough for a header. */
const NONCE = /^[A-Za-z0-9_-]{22,128}$/;

export function isValidNonce(nonce: unknown): nonce is string {
  return typeof nonce === 'string' && NONCE.test(nonce);
}

export function healthProof(token: string, address: string, port: number, nonce: string): string {
  return createHmac('sha256', token)
    .update(`loopgate-health/2\n${normaliseAddress(address)}\n${port}\n${nonce}`)
    .digest('base64url');
}

/** One spelling per address: an IPv4-mapped IPv6 address is its IPv4 address; brackets go. */
function normaliseAddress(address: string): string {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

/**
 * A health check the proxy answered: a window attaching, or checking on the proxy it
 * uses. Recorded like every request, but not a request of the user's tools.
 */
export function isAnsweredHealthCheck(rec: Pick<SpanRecord, 'method' | 'canonicalPath' | 'status'>): boolean {
  return rec.method === 'GET' && rec.canonicalPath === HEALTH_PATH && rec.status === 200;
}
