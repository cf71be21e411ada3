// Issue 13: a fuzz test over the guards and path normalisation. Random
// methods, request targets (encodings, dot segments, doubled slashes,
// absolute-form, non-API paths), Host, Origin, content types and token
// placements, sent as raw bytes over real sockets. The property: nothing
// reaches the upstream unless it is an authorised request whose path
// normalises to /v1/..., it then carries exactly one credential (the key),
// every request gets a well-formed answer or a closed connection, and the
// proxy stays up.
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../../simulator/index.js';
import { normaliseRequestPath } from '../../rules/addresses/paths.js';
import { KEYS, startStack, TOKEN, type Stack } from './stack.js';

let stack: Stack;
let port: number;
beforeAll(async () => {
  stack = await startStack({ logFile: false });
  port = Number(new URL(stack.proxy.url).port);
});
afterAll(() => stack.close());

/** Raw bytes out, everything back until the server closes (or a deadline: then what arrived). */
function exchange(text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, 10_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', done);
    socket.on('error', () => undefined);
    socket.write(text);
  });
}

const PATHS = [
  '/v1/chat/completions',
  '/v1/models',
  '/v1/responses',
  '/v1/messages',
  '/v1/v1/models',
  '/v1/chat/completions/',
  '/chat/completions',
  '/models',
  '/api/user/self',
  '/etc/passwd',
  '/',
  '',
  '*',
  '/_loopgate/health',
  '/_loopgate/stats',
  '/v1/../api/user/self',
  '/v1/./models',
  '/v1/%2e%2e/api/user/self',
  '/v1%2fmodels',
  '/v1/%2E%2E%2Fapi',
  '/V1/models',
  '//v1/models',
  '/v1//models',
  '/v1\\models',
  '/%76%31/models',
  '/v1/models%00',
  'http://127.0.0.1/v1/models',
  'http://evil.example/v1/models',
  '/v1/models/../../api',
  '/v1/models?key=x',
];
const SUFFIX_CHARS = ['', 'a', '/', '.', '..', '%2f', '%2e', '%', '?', '#', ';', '~', 'é', '%00', '\\', '//', '%252e'];

const target = fc.oneof(
  fc.constantFrom(...PATHS),
  fc
    .tuple(fc.constantFrom(...PATHS), fc.array(fc.constantFrom(...SUFFIX_CHARS), { maxLength: 4 }))
    .map(([p, s]) => p + s.join('')),
  fc.stringMatching(/^\/[\w./%~-]{0,40}$/),
);
const method = fc.constantFrom(
  'GET',
  'POST',
  'PUT',
  'DELETE',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'get',
  'post',
  'TRACE',
  'PROPFIND',
);
/** Half the time the allowed value, so that enough requests get far enough to test the later guards. */
const mostly = <T>(good: T, all: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 1, arbitrary: fc.constant(good) }, { weight: 1, arbitrary: all });

const host = fc.constantFrom(
  'own',
  'localhost',
  '[::1]',
  'LOCALHOST',
  'own.',
  'other-port',
  'evil',
  'none',
  'twice',
  'empty',
);
const origin = fc.constantFrom('none', 'own', 'evil', 'null', 'file://');
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'multipart/form-data; boundary=x',
  'none',
  'application/x-www-form-urlencoded',
  'application/vnd.api+json',
);
const token = fc.constantFrom('bearer', 'x-api-key', 'wrong', 'none', 'both', 'basic', 'lowercase-bearer');
const withBody = fc.boolean();

function hostLines(kind: string): string[] {
  switch (kind) {
    case 'own':
      return [`Host: 127.0.0.1:${port}`];
    case 'localhost':
      return [`Host: localhost:${port}`];
    case '[::1]':
      return [`Host: [::1]:${port}`];
    case 'LOCALHOST':
      return [`Host: LOCALHOST:${port}`];
    case 'own.':
      return [`Host: localhost.:${port}`];
    case 'other-port':
      return [`Host: 127.0.0.1:${port + 1}`];
    case 'evil':
      return ['Host: evil.example'];
    case 'twice':
      return [`Host: 127.0.0.1:${port}`, 'Host: evil.example'];
    case 'empty':
      return ['Host: '];
    default:
      return [];
  }
}

const HOST_OK = new Set(['own', 'localhost', '[::1]', 'LOCALHOST']);
const ORIGIN_OK = new Set(['none', 'own']);
const TOKEN_OK = new Set(['bearer', 'x-api-key', 'both', 'lowercase-bearer']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

describe('guards and path normalisation under fuzzing', () => {
  it('nothing reaches the upstream unless authorised and under /v1, with exactly the key; nothing crashes', async () => {
    let n = 0;
    let reached = 0;
    await fc.assert(
      fc.asyncProperty(
        method,
        target,
        mostly('own', host),
        mostly('none', origin),
        mostly('application/json', contentType),
        mostly('bearer', token),
        withBody,
        async (m, t, h, o, ct, tk, body) => {
          const id = `fuzz-${++n}-${Date.now()}`;
          const payload = body
            ? JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'fuzz' }] })
            : '';
          const lines = [`${m} ${t} HTTP/1.1`, ...hostLines(h), `x-fuzz-id: ${id}`, 'Connection: close'];
          if (o === 'own') lines.push(`Origin: http://127.0.0.1:${port}`);
          else if (o === 'evil') lines.push('Origin: https://evil.example');
          else if (o !== 'none') lines.push(`Origin: ${o}`);
          if (ct !== 'none') lines.push(`Content-Type: ${ct}`);
          if (tk === 'bearer' || tk === 'both') lines.push(`Authorization: Bearer ${TOKEN}`);
          if (tk === 'lowercase-bearer') lines.push(`authorization: bearer ${TOKEN}`);
          if (tk === 'x-api-key' || tk === 'both') lines.push(`x-api-key: ${TOKEN}`);
          if (tk === 'wrong') lines.push('Authorization: Bearer lg-local-wrong-token-0000000000000000');
          if (tk === 'basic') lines.push(`Authorization: Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`);
          if (body) lines.push(`Content-Length: ${Buffer.byteLength(payload)}`);
          const answer = await exchange(lines.join('\r\n') + '\r\n\r\n' + payload);

          // (1) A well-formed answer, or a closed connection (Node refuses some request lines outright).
          if (answer !== '') expect(answer).toMatch(/^HTTP\/1\.1 \d{3} /);
          // (2) What the upstream saw of this request.
          const seen = stack.sim.requests.filter((r) => r.headers['x-fuzz-id'] === id);
          if (seen.length === 0) return;
          reached++;
          const normalised = normaliseRequestPath(m.toUpperCase(), t);
          const authorised =
            HOST_OK.has(h) &&
            ORIGIN_OK.has(o) &&
            TOKEN_OK.has(tk) &&
            (!BODY_METHODS.has(m.toUpperCase()) ||
              ct === 'application/json' ||
              ct.startsWith('application/json;') ||
              ct === 'application/vnd.api+json');
          expect(authorised, `${m} ${t} host=${h} origin=${o} ct=${ct} token=${tk} reached the upstream`).toBe(true);
          expect(normalised.ok && normalised.path.startsWith('/v1/'), `${t} does not normalise to /v1/...`).toBe(true);
          for (const r of seen) {
            expect(r.path.startsWith('/v1/')).toBe(true);
            // (3) Exactly one credential value: the real key (Anthropic routes carry it in two headers).
            expect(new Set(r.credentials.map((c) => c.fingerprint))).toEqual(new Set([fingerprint(KEYS.default)]));
          }
        },
      ),
      { numRuns: 1000 },
    );
    // The property was exercised both ways: some requests did get through.
    expect(reached).toBeGreaterThan(30);
    expect(n - reached).toBeGreaterThan(100);
    // (4) Still up, and every request is accounted for.
    const health = await fetch(`${stack.proxy.url}/_loopgate/health`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(health.status).toBe(200);
    const deadline = Date.now() + 5000;
    while (stack.proxy.stats.inFlight !== 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(stack.proxy.stats.inFlight).toBe(0);
  }, 120_000);
});
