// Header names that carry a credential: the one list (issue 12). The proxy
// strips these from every client request (then injects exactly one real
// credential), the simulator fingerprints them in its request record (so a
// test sees any credential the proxy let through), and redaction always
// replaces them. Lower-case, as Node reports header names. Pure data.

/** Request headers a client authenticates with. */
export const CREDENTIAL_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'cookie',
];

/** Response headers that hand out a credential (an upstream session cookie). */
export const RESPONSE_CREDENTIAL_HEADERS: readonly string[] = ['set-cookie'];

/** True when `name` (lower-case) carries a credential in a request. */
export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADERS.includes(name);
}
