// Issue 31 §4 G-7 and G-8, through real sockets: a secret spelt with escapes the redactor did not know.
// G-7: an upstream echoed the key as JSON \u escapes; the ring, the log and the HAR held the escapes, and
// `show`, `show --wire` and the detail panel decoded them and printed the plain key.
// G-8: a query value the client %-encoded in lower-case hex went into the record as it was, and the HAR's
// queryString decoded it back into the plain key.
// Each sink is checked as a reader sees it: as stored, and with every escape decoded.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { toHar, toJsonl } from '../../storage/log/index.js';
import { detailHtml } from '../../extension/traffic/detail-html.js';
import { assertNoCanary, makeCanary } from '../log/canary.js';
import { logRecords, until } from '../proxy/stack.js';
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

let upstream: Server;
let proxy: RunningProxy;
let logFile: string;

beforeAll(async () => {
  logFile = join(mkdtempSync(join(tmpdir(), 'loopgate-escaped-')), 'traffic.jsonl');
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] }));
      }
      if (!req.headers['x-echo']) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            id: 'c',
            object: 'chat.completion',
            model: 'gpt-4o-mini',
            choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          }),
        );
      }
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      // A relay that quotes the key with JSON escapes (valid JSON: any reader decodes it to the key).
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        `{"error":{"message":"Incorrect API key provided: ${unicodeSpelt(key)}","type":"invalid_request_error","code":"invalid_api_key"}}`,
      );
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  proxy = await startProxy({
    upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    allowHttp: true,
    key: KEY,
    token: TOKEN,
    port: 0,
    logFile,
    logBodies: true,
    bridge: 'off',
  });
});

afterAll(async () => {
  await proxy?.close();
  await new Promise((r) => upstream?.close(r));
});

/** One chat request with `query`; `echo`: the upstream quotes the key with escapes. Its id, once logged. */
async function send(query: string, echo: boolean): Promise<string> {
  const res = await request(`${proxy.url}/v1/chat/completions${query}`, {
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
  await until(() => (logRecords(logFile).some((r) => r.id === id) ? true : undefined), 5000, 'the log record');
  return id;
}

describe('a secret spelt with escapes reaches no sink in a form a reader decodes to the secret', () => {
  it('G-7: the key an upstream quotes in JSON \\u escapes: not in the ring, show (overview, --wire, --json), the detail panel, the log', async () => {
    const id = await send('', true);
    const entry = proxy.traffic!.get(id)!;
    expect(entry.responseBody).toContain('Incorrect API key provided');
    const sinks: Record<string, string> = {
      'ring bodies': `${entry.requestBody}\n${entry.responseBody}`,
      'ring record': JSON.stringify(entry.record),
    };
    const env = { LOOPGATE_TOKEN: TOKEN };
    for (const flags of [[], ['--wire'], ['--json']]) {
      const out = await runCli(['show', id, ...flags, '--port', String(proxy.port)], env);
      expect(out.code).toBe(0);
      sinks[`show ${flags.join(' ')}`] = out.out + out.err;
    }
    sinks['detail panel'] = detailHtml(entry, {
      nonce: 'N',
      cspSource: 'vscode-resource:',
      scriptUri: 'vscode-webview://x/detail-page.js',
    });
    sinks.log = JSON.stringify(logRecords(logFile).find((r) => r.id === id));
    expect(leaks(sinks)).toEqual([]);
  });

  it("G-8: a query value %-encoded in lower-case hex: not in the HAR's queryString, the HAR, JSONL or the log", async () => {
    const id = await send(`?note=${percentLower(KEY)}&token=x&also=${percentLower(TOKEN)}`, false);
    // Exported without the secrets: as a user who does not pass them exports.
    const records = logRecords(logFile).filter((r) => r.id === id);
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
