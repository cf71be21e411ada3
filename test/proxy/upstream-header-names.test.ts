// Issue 23 F-I and F-H: what an upstream puts in its response header NAMES.
// F-I: a key with capital letters in a header name reached the client and the
// log lower-cased (Node lower-cases names; the comparison was exact).
// F-H: an upstream's x-loopgate-* headers reached the client as if Loopgate had
// written them (the editor turns a forged `x-loopgate-diagnosis: bad-key` into
// "set a new key").
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { exportTrafficLog } from '../../storage/log/index.js';
import { logRecords, until } from './stack.js';
import { defaultFixture } from '../../simulator/index.js';
import { startUpstream, type Upstream } from '../kit/upstream.js';

// Mixed case on purpose, and no recognisable shape: only exact-secret redaction can catch them.
const KEY = 'RelayKey-MixedCase-Q7vXw2LpZ9kTb4Hs';
const TOKEN = 'lg-local-MixedCaseToken-R8yUe3NqWc6Jd';

const FORGED = {
  'x-loopgate-diagnosis': 'bad-key',
  'X-Loopgate-Bridge': 'responses->chat',
  'x-loopgate-warning': 'forged warning',
  'x-loopgate-rewrite': '/evil -> /v1/evil',
  'x-loopgate-route': 'forged-key native',
  'X-LOOPGATE-PROOF': 'forged',
};

let upstream: Upstream;
let proxy: RunningProxy;
let dir: string;
const lines: string[] = [];
const logFile = () => join(dir, 'traffic.jsonl');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loopgate-header-names-'));
  upstream = await startUpstream({
    fixture: {
      ...defaultFixture,
      keys: [...defaultFixture.keys, { key: KEY, group: 'default', status: 'active', balance: 100 }],
    },
  });
  // The simulator's answers, with the key as it was given (capitals kept on the wire) in a name; an innocent neighbour.
  upstream
    .on({ method: 'POST' })
    .headers({ ...FORGED, [`X-${KEY}`]: '1', [`x-echo-${KEY}-tail`]: '2', 'x-note': 'kept' });
  proxy = await startProxy({
    upstream: upstream.baseUrl,
    allowHttp: true,
    key: KEY,
    token: TOKEN,
    port: 0,
    logFile: logFile(),
    bridge: 'off',
    onTraffic: (l) => lines.push(l),
    onHint: (h) => lines.push(h),
  });
});
afterAll(async () => {
  await proxy.close();
  await upstream.close();
});

/** No form of any secret, in any letter case. */
function assertNoSecretAnyCase(text: string): void {
  const lower = text.toLowerCase();
  for (const s of [KEY, TOKEN])
    expect(lower.includes(s.toLowerCase()), `a secret (lower-cased) in: ${text.slice(0, 2000)}`).toBe(false);
}

async function call(
  stream: boolean,
  extra: Record<string, string> = {},
): Promise<{ status: number; headers: Array<[string, string]>; body: string }> {
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      ...extra,
    },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream }),
  });
  return { status: res.status, headers: [...res.headers], body: await res.text() };
}

describe('upstream response header names', () => {
  for (const stream of [false, true]) {
    it(`F-I: a mixed-case key in a header name never reaches the client (${stream ? 'stream' : 'whole'})`, async () => {
      const got = await call(stream);
      expect(got.status).toBe(200);
      const names = got.headers.map(([n]) => n);
      expect(names).toContain('x-note');
      assertNoSecretAnyCase(got.headers.map(([n, v]) => `${n}: ${v}`).join('\n'));
    });

    it(`F-H: an upstream cannot set x-loopgate-* headers (${stream ? 'stream' : 'whole'})`, async () => {
      const got = await call(stream);
      const own = Object.fromEntries(got.headers.filter(([n]) => n.startsWith('x-loopgate-')));
      // Loopgate's own, and only those: a 200 without a diagnosis, warning, bridge or rewrite.
      expect(Object.keys(own).sort()).toEqual(['x-loopgate-request-id', 'x-loopgate-route']);
      expect(own['x-loopgate-route']).toBe('key-1 native');
      expect(own['x-loopgate-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  }

  it('F-I: the log, the console and the exports hold no header name with a secret in any case', async () => {
    // A client header name carrying the token (Node lower-cases it too) goes to the log as well.
    await call(false, { [`x-${TOKEN}`]: '1' });
    await until(() => logRecords(logFile()).length >= 5 || undefined, 10_000, 'the records');
    const records = logRecords(logFile());
    const last = records.at(-1)!;
    expect(Object.keys(last.requestHeaders ?? {}).some((n) => /^x-\[REDACTED:[0-9a-f]{4}\]$/.test(n))).toBe(true);
    expect(Object.keys(last.responseHeaders ?? {})).toContain('x-note');
    assertNoSecretAnyCase(readFileSync(logFile(), 'utf8'));
    assertNoSecretAnyCase(lines.join('\n'));
    for (const format of ['har', 'jsonl'] as const) {
      const out = join(dir, `out.${format}`);
      await exportTrafficLog({ log: logFile(), out, format, secrets: [KEY, TOKEN] });
      assertNoSecretAnyCase(readFileSync(out, 'utf8'));
    }
  });
});
