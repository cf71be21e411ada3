// Issue 4 §5: plant a canary key and a canary token everywhere a request can
// carry them, run real traffic through the proxy, then search every sink —
// the JSONL log and its rotated files, a HAR and a JSONL export, the console
// lines and hints — for either canary in any encoding.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startSimulator, defaultFixture, type Simulator } from '../../simulator/index.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { exportTrafficLog } from '../../storage/log/index.js';
import { assertNoCanary, makeCanary } from './canary.js';
import { until } from '../proxy/stack.js';

const KEY = makeCanary('sk-canary-key-');
const TOKEN = makeCanary('lg-local-canary-');
const secrets = [KEY, TOKEN];

let sim: Simulator;
let proxy: RunningProxy;
let dir: string;
let proxyClosed = false;
const console: string[] = [];
const logFile = () => join(dir, 'traffic.jsonl');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loopgate-canary-'));
  // The canary is a real key for this simulator, so traffic succeeds end to end.
  // Its group's channels refuse a parameter named after the token, so the upstream's unsupported_parameter error echoes it.
  const groups = {
    ...defaultFixture.groups,
    canary: { protocols: ['chat' as const], models: ['gpt-4o-mini'], unsupported: [TOKEN] },
  };
  sim = await startSimulator({
    port: 0,
    fixture: { groups, keys: [...defaultFixture.keys, { key: KEY, group: 'canary', status: 'active', balance: 100 }] },
  });
  proxy = await startProxy({
    upstream: sim.url,
    key: KEY,
    token: TOKEN,
    port: 0,
    logFile: logFile(),
    logMaxBytes: 16 * 1024, // force rotation during the sweep
    logBodies: true,
    onTraffic: (line) => console.push(line),
    onHint: (h) => console.push(h),
  });
});
afterAll(async () => {
  if (!proxyClosed) await proxy.close();
  await sim.close();
});

function send(path: string, init: { method?: string; headers?: [string, string][]; body?: string }): Promise<Response> {
  const headers = new Headers();
  for (const [k, v] of init.headers ?? []) headers.append(k, v);
  return fetch(proxy.url + path, { method: init.method ?? 'POST', headers, body: init.body });
}

describe('canary sweep through the proxy', () => {
  it('plants the canaries everywhere and finds them nowhere', async () => {
    const auth: [string, string][] = [['authorization', `Bearer ${TOKEN}`]];
    const json: [string, string] = ['content-type', 'application/json'];
    const chat = (content: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

    // Headers: every casing, duplicated, in credential and in innocent-looking headers.
    for (const name of [
      'X-Api-Key',
      'x-API-key',
      'API-KEY',
      'Cookie',
      'X-Custom-Token',
      'X-Debug',
      'Proxy-Authorization',
    ]) {
      const res = await send('/v1/chat/completions', {
        headers: [...auth, json, [name, KEY], [name, `Bearer ${TOKEN}`], ['X-Note', `key is ${KEY}`]],
        body: chat('headers'),
      });
      expect(res.status).toBe(200);
    }
    // The query.
    expect(
      (
        await send(`/v1/models?key=${KEY}&api_key=${encodeURIComponent(KEY)}&token=${TOKEN}`, {
          method: 'GET',
          headers: auth,
        })
      ).status,
    ).toBe(200);
    // A JSON body, escaped and plain, nested.
    expect(
      (
        await send('/v1/chat/completions', {
          headers: [...auth, json],
          body: chat(`my key is ${KEY} and token ${TOKEN}`, { metadata: { k: KEY, nested: [{ t: TOKEN }] } }),
        })
      ).status,
    ).toBeLessThan(500);
    // An upstream error that echoes them: an unknown model id and an unsupported parameter name.
    expect(
      (
        await send('/v1/chat/completions', {
          headers: [...auth, json],
          body: JSON.stringify({ model: KEY, messages: [{ role: 'user', content: 'x' }] }),
        })
      ).status,
    ).toBe(503);
    expect(
      (await send('/v1/chat/completions', { headers: [...auth, json], body: chat('x', { [TOKEN]: 1 }) })).status,
    ).toBe(400);
    // SSE: the simulator echoes the input, split over many chunks with pauses between them.
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const stream = await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `stream ${KEY} ${TOKEN}` }], stream: true },
      { headers: { 'x-sim-chunks': '40', 'x-sim-chunk-delay-ms': '2' } },
    );
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toContain(KEY); // it really travelled through the stream
    // Thrown errors: a broken body whose parse error quotes the canary.
    const broken = await send('/v1/chat/completions', { headers: [...auth, json], body: `${KEY} not json ${TOKEN}` });
    expect(broken.status).toBe(400);
    assertNoCanary(await broken.text(), secrets);
    // Enough traffic to rotate the log at least once.
    for (let i = 0; i < 30; i++)
      await send('/v1/chat/completions', { headers: [...auth, json], body: chat(`filler ${i} ${KEY}`) });

    await until(() => console.length >= 40 || undefined, 10_000, `the traffic lines (have ${console.length})`);
    const files = () => readdirSync(dir).filter((f) => f.startsWith('traffic'));
    await until(() => files().length >= 2 || undefined, 10_000, 'a rotated log file');

    // Every sink. Stopping the proxy flushes its log: swept while it still wrote,
    // a rotation could remove a file between the listing and the read (CI saw ENOENT).
    await proxy.close();
    proxyClosed = true;
    let swept = 0;
    for (const f of files()) {
      const content = readFileSync(join(dir, f), 'utf8');
      if (f !== 'traffic.jsonl') expect(content.length, f).toBeGreaterThan(0);
      swept += content.length;
      assertNoCanary(content, secrets);
    }
    expect(swept).toBeGreaterThan(0);
    assertNoCanary(console.join('\n'), secrets);
    const har = join(dir, 'out.har');
    const jsonl = join(dir, 'out.jsonl');
    await exportTrafficLog({ log: logFile(), out: har, format: 'har' });
    await exportTrafficLog({ log: logFile(), out: jsonl, format: 'jsonl' });
    const harText = readFileSync(har, 'utf8');
    expect(JSON.parse(harText).log.entries.length).toBeGreaterThan(10);
    assertNoCanary(harText, secrets);
    assertNoCanary(readFileSync(jsonl, 'utf8'), secrets);
    // The redaction marks are there, so the sweep looked at real content.
    expect(harText).toMatch(/\[REDACTED:[0-9a-f]{4}\]/);
  });
});
