// Issue 31 §4 G-7 and G-8, through real sockets: a secret spelt with escapes the redactor did not know.
// G-7: an upstream echoed the key as JSON \u escapes; the ring, the log and the HAR held the escapes, and
// `show`, `show --wire` and the detail panel decoded them and printed the plain key.
// G-8: a query value the client %-encoded in lower-case hex went into the record as it was, and the HAR's
// queryString decoded it back into the plain key.
// Each sink is checked as a reader sees it: as stored, and with every escape decoded.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { toHar, toJsonl } from '../../storage/log/index.js';
import { detailHtml } from '../../extension/traffic/detail-html.js';
import { assertNoCanary, makeCanary } from '../log/canary.js';
import { logRecords, until } from '../proxy/stack.js';
import { fixtureWithKeys, startKitStack } from '../kit/stack.js';
import { sharedForAll } from '../kit/lifecycle.js';
import { runCli } from '../cli/io.js';

const KEY = makeCanary('sk-canary-esc-');
const TOKEN = makeCanary('lg-local-esc-');

/** Every character as \uXXXX, alternating the hex's letter case; every other one left plain. */
function unicodeSpelt(s: string): string {
  return [...s]
    .map((c, i) => (i % 2 ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))
    .map((c, i) => (i % 4 === 0 ? c.toUpperCase().replace('\\U', '\\u') : c))
    .join('');
}

/** Every character %-encoded in lower-case hex (encodeURIComponent would leave letters plain and use upper case). */
function percentLower(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

/** What a reader decodes: JSON \u and \/ escapes, then %XX runs (as URLSearchParams or a JSON viewer would). */
function decoded(text: string): string {
  const json = text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\\//g, '/');
  return json.replace(/(?:%[0-9a-fA-F]{2})+/g, (m) => {
    try {
      return decodeURIComponent(m);
    } catch {
      return m;
    }
  });
}

/** The sinks that hold a secret as stored or once decoded (none, for the test to pass), each with where. */
function leaks(sinks: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [name, text] of Object.entries(sinks)) {
    for (const [how, t] of [
      ['as stored', text],
      ['decoded', decoded(text)],
    ] as const) {
      try {
        assertNoCanary(t, [KEY, TOKEN]);
      } catch (err) {
        out.push(`${name} (${how}): ${(err as Error).message}`);
      }
    }
  }
  return out;
}

// The simulator holds the key; one rule makes it the relay that quotes the key with JSON escapes.
const kit = sharedForAll(async () => {
  const k = await startKitStack({
    keys: { main: KEY },
    token: TOKEN,
    fixture: fixtureWithKeys({ [KEY]: 'default' }),
    opts: { logBodies: true, bridge: 'off' },
  });
  k.upstream.on({ path: '/v1/chat/completions', headers: { 'x-echo': '1' } }).handle((res, _signal, seen) => {
    const key = String(seen.headers.authorization ?? '').replace(/^Bearer /, '');
    // Valid JSON: any reader decodes it to the key.
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(
      `{"error":{"message":"Incorrect API key provided: ${unicodeSpelt(key)}","type":"invalid_request_error","code":"invalid_api_key"}}`,
    );
  });
  return k;
});

/** One chat request with `query`; `echo`: the upstream quotes the key with escapes. Its id, once logged. */
async function send(query: string, echo: boolean): Promise<string> {
  const res = await request(`${kit.proxies.main.url}/v1/chat/completions${query}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      ...(echo ? { 'x-echo': '1' } : {}),
    },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.statusCode).toBe(echo ? 401 : 200);
  const id = res.headers['x-loopgate-request-id'] as string;
  await res.body.text();
  await until(
    () => (logRecords(kit.logFiles.main).some((r) => r.id === id) ? true : undefined),
    5000,
    'the log record',
  );
  return id;
}

describe('a secret spelt with escapes reaches no sink in a form a reader decodes to the secret', () => {
  it('G-7: the key an upstream quotes in JSON \\u escapes: not in the ring, show (overview, --wire, --json), the detail panel, the log', async () => {
    const id = await send('', true);
    const entry = kit.proxies.main.traffic!.get(id)!;
    expect(entry.responseBody).toContain('Incorrect API key provided');
    const sinks: Record<string, string> = {
      'ring bodies': `${entry.requestBody}\n${entry.responseBody}`,
      'ring record': JSON.stringify(entry.record),
    };
    const env = { LOOPGATE_TOKEN: TOKEN };
    for (const flags of [[], ['--wire'], ['--json']]) {
      const out = await runCli(['show', id, ...flags, '--port', String(kit.proxies.main.port)], env);
      expect(out.code).toBe(0);
      sinks[`show ${flags.join(' ')}`] = out.out + out.err;
    }
    sinks['detail panel'] = detailHtml(entry, {
      nonce: 'N',
      cspSource: 'vscode-resource:',
      scriptUri: 'vscode-webview://x/detail-page.js',
    });
    sinks.log = JSON.stringify(logRecords(kit.logFiles.main).find((r) => r.id === id));
    expect(leaks(sinks)).toEqual([]);
  });

  it("G-8: a query value %-encoded in lower-case hex: not in the HAR's queryString, the HAR, JSONL or the log", async () => {
    const id = await send(`?note=${percentLower(KEY)}&token=x&also=${percentLower(TOKEN)}`, false);
    // Exported without the secrets: as a user who does not pass them exports.
    const records = logRecords(kit.logFiles.main).filter((r) => r.id === id);
    const har = toHar(records, { rules: [] }) as {
      log: { entries: Array<{ request: { queryString: Array<{ name: string; value: string }> } }> };
    };
    const queryString = har.log.entries[0]!.request.queryString;
    expect(queryString.map((q) => q.name)).toEqual(['note', 'token', 'also']);
    expect(
      leaks({
        'HAR queryString': JSON.stringify(queryString),
        HAR: JSON.stringify(har),
        JSONL: toJsonl(records),
        log: JSON.stringify(records),
      }),
    ).toEqual([]);
  });
});
