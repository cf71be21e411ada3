// Issue 13 F2/F3/F12: an upstream that tries to get the key it was given into
// every field of the record (request id, error code and type in base64 and
// hex, a stream's error event, a response header name, a text streamed back in
// pieces). The key here has no recognisable shape, so only exact-secret
// redaction can catch it. Every sink is swept: the log, the console lines and
// hints, /_loopgate/stats, exports made without the key, and what the client
// got in its headers.
import { type ServerResponse } from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { exportTrafficLog } from '../../storage/log/index.js';
import { assertNoCanary, makeCanary } from './canary.js';
import { logRecords, until } from '../proxy/stack.js';
import { startKitStack } from '../kit/stack.js';
import { sharedForAll } from '../kit/lifecycle.js';
import type { Seen } from '../kit/upstream.js';

const KEY = makeCanary('relay-canary-');
const TOKEN = makeCanary('lg-local-canary-');
const secrets = [KEY, TOKEN];

/** The key the upstream was given, as it would quote it. */
function keyOf(req: Seen): string {
  return String(req.headers.authorization ?? '').replace(/^Bearer /, '');
}

function hostile(req: Seen, res: ServerResponse): void {
  const key = keyOf(req);
  const attack = String(req.headers['x-attack'] ?? '');
  if (req.path === '/v1/models') {
    res.writeHead(200, { 'content-type': 'application/json', 'x-oneapi-request-id': key });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] }));
    return;
  }
  if (attack === 'request-id') {
    // The request id, a header value and a header *name* all carry the key.
    res.writeHead(503, {
      'content-type': 'application/json',
      'x-oneapi-request-id': key,
      [`x-${key.toLowerCase()}`]: '1',
      'x-note': `for ${key}`,
    });
    res.end(JSON.stringify({ error: { message: 'busy', type: 'server_error', code: 'unavailable' } }));
    return;
  }
  if (attack === 'encoded-codes') {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: { message: 'no', type: Buffer.from(key).toString('hex'), code: Buffer.from(key).toString('base64') },
      }),
    );
    return;
  }
  if (attack === 'plain-codes') {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'no', type: key, code: key } }));
    return;
  }
  const sse = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const chunk = (content: string) => ({
    id: 'chatcmpl-h',
    object: 'chat.completion.chunk',
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta: { content } }],
  });
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (attack === 'stream-error') {
    res.write(sse(chunk('partial answer')));
    res.end(sse({ error: { code: key, type: Buffer.from(key).toString('base64'), message: 'stream failed' } }));
    return;
  }
  // 'split': echo the prompt back in 4-character deltas, the key appended.
  const prompt = (JSON.parse(req.body.toString('utf8')) as { messages: Array<{ content: string }> }).messages[0]!
    .content;
  const text = `Echo: ${prompt} and mine is ${key}.`;
  for (let i = 0; i < text.length; i += 4) res.write(sse(chunk(text.slice(i, i + 4))));
  res.end('data: [DONE]\n\n');
}

const dir = mkdtempSync(join(tmpdir(), 'loopgate-hostile-'));
const lines: string[] = [];
const logFile = () => join(dir, 'traffic.jsonl');
// Every answer is the hostile one: the kit upstream with one rule that matches all.
const kit = sharedForAll(async () => {
  const k = await startKitStack({
    keys: { main: KEY },
    token: TOKEN,
    opts: {
      logFile: logFile(),
      logBodies: true,
      onTraffic: (line) => lines.push(line),
      onHint: (h) => lines.push(h),
    },
  });
  k.upstream.on({}).handle((res, _signal, seen) => hostile(seen, res));
  return k;
});

describe('a hostile upstream cannot get the key into any record field', () => {
  it('request id, header names and values, encoded error codes and types, stream error events, split deltas', async () => {
    const client = new OpenAI({ baseURL: `${kit.proxies.main.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const seenHeaders: string[] = [];
    for (const attack of ['request-id', 'encoded-codes', 'plain-codes']) {
      const res = await fetch(`${kit.proxies.main.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-attack': attack },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      for (const [name, value] of res.headers) seenHeaders.push(`${name}: ${value}`);
      await res.text();
    }
    // The header named after the key did not reach the client; its innocent neighbour did.
    expect(seenHeaders.join('\n')).toContain('x-note: for [REDACTED');
    assertNoCanary(seenHeaders.join('\n'), [KEY]);

    const failing = await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true },
      { headers: { 'x-attack': 'stream-error' } },
    );
    await expect(async () => {
      for await (const _ of failing) void _;
    }).rejects.toThrow();

    // The client asks for its own secrets to be echoed: both come back in 4-character pieces.
    const split = await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `my key ${KEY} and token ${TOKEN}` }], stream: true },
      { headers: { 'x-attack': 'split' } },
    );
    let text = '';
    for await (const c of split) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toContain('Echo: my key'); // it really streamed in pieces

    await until(() => logRecords(logFile()).length >= 5 || undefined, 10_000, 'five records');
    const records = logRecords(logFile());
    const byAttack = (a: string) => records.find((r) => r.requestHeaders?.['x-attack'] === a)!;
    // The fields really were filled from the upstream (redacted, not left out).
    expect(byAttack('request-id').upstreamRequestId).toMatch(/\[REDACTED:[0-9a-f]{4}\]/);
    expect(byAttack('encoded-codes').errorCode).toMatch(/\[REDACTED:[0-9a-f]{4}\]/);
    expect(byAttack('encoded-codes').errorType).toMatch(/\[REDACTED:[0-9a-f]{4}\]/);
    expect(byAttack('plain-codes').errorCode).toMatch(/^\[REDACTED:[0-9a-f]{4}\]\**$/);
    expect(byAttack('stream-error').errorCode).toMatch(/\[REDACTED:[0-9a-f]{4}\]/);
    expect(Object.keys(byAttack('request-id').responseHeaders ?? {})).toContain('x-note');

    // F3: the streamed pieces, joined again, give back neither secret.
    const splitRecord = byAttack('split');
    const joined = splitRecord
      .responseBody!.split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map(
        (l) =>
          (JSON.parse(l.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]!.delta.content ??
          '',
      )
      .join('');
    expect(joined).toContain('Echo: my key [REDACTED:');
    assertNoCanary(joined, secrets);

    // Every sink.
    const stats = await (
      await fetch(`${kit.proxies.main.url}/_loopgate/stats`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    expect(JSON.parse(stats).lastError).toBeDefined();
    assertNoCanary(stats, secrets);
    assertNoCanary(lines.join('\n'), secrets);
    expect(lines.join('\n')).toMatch(/\[REDACTED:[0-9a-f]{4}\]/); // the console line shows the scrubbed code
    const log = readFileSync(logFile(), 'utf8');
    assertNoCanary(log, secrets);
    // Exports made in a shell that does not know the key (no secrets passed): nothing left to find.
    for (const format of ['har', 'jsonl'] as const) {
      const out = join(dir, `out.${format}`);
      await exportTrafficLog({ log: logFile(), out, format });
      assertNoCanary(readFileSync(out, 'utf8'), secrets);
    }
  });
});
