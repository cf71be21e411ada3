// A streamed answer's chunks pass the proxy as bytes (issue 40 finding 5): a
// chunk no stage changes reaches the client as the upstream's bytes, and the
// usage hider (a chat stream whose client did not ask for usage, so Loopgate
// asked for it) cuts out only the usage pieces, never turning a chunk into a
// string and back. The kit's upstream (test/kit/upstream.ts) writes exact chunks, bytes that are
// not valid UTF-8 among them (a string round trip would turn them into U+FFFD)
// and a "usage":null member cut across two chunks.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { hostOf } from './raw.js';
import { KEYS, TOKEN } from './stack.js';
import { startUpstream, type Rule, type Upstream } from '../kit/upstream.js';

const N = 64;
/** Not UTF-8: a lone continuation byte and 0xFF, inside a string's bytes (an upstream's bug, passed on as it came). */
const RAW = Buffer.from([0x80, 0xff]);

let upstream: Upstream;
let proxy: RunningProxy;
/** What the upstream sends back, per test. */
let chunks: Buffer[] = [];

/** The upstream answers chat calls with `sent`, one write per event-loop turn (so the proxy reads separate chunks). */
function upstreamStreams(sent: Buffer[]): Rule {
  chunks = sent;
  upstream.reset();
  return upstream.on({ method: 'POST' }).stream(sent);
}

beforeAll(async () => {
  upstream = await startUpstream();
  proxy = await startProxy({
    upstream: upstream.baseUrl,
    key: KEYS.default,
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile: false,
  });
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
});

/** The client's bytes of a streamed chat answer, joined without decoding. */
function streamed(body: Record<string, unknown>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: proxy.port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { host: hostOf(proxy.url), authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      },
      (res) => {
        const got: Buffer[] = [];
        res.on('data', (b: Buffer) => got.push(b));
        res.on('end', () => resolve(Buffer.concat(got)));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** An event's bytes: `data: {…"content":"<text><RAW>"…}<usage>\n\n`, with `usage` the member as the upstream writes it. */
function event(i: number, usage: string): Buffer {
  return Buffer.concat([
    Buffer.from(`data: {"id":"c","choices":[{"index":0,"delta":{"content":"é${i}`),
    RAW,
    Buffer.from(`"}}]${usage}}\n\n`),
  ]);
}

const USAGE_CHUNK = Buffer.from(
  'data: {"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\n',
);
const DONE = Buffer.from('data: [DONE]\n\n');

/** Counts Buffer#toString calls while `run` runs (a string round trip per chunk would be N of them). */
async function countingToString<T>(run: () => Promise<T>): Promise<{ result: T; calls: number }> {
  const original = Buffer.prototype.toString;
  let calls = 0;
  Buffer.prototype.toString = function (this: Buffer, ...args: unknown[]) {
    calls++;
    return (original as (...a: unknown[]) => string).apply(this, args);
  } as typeof original;
  try {
    return { result: await run(), calls };
  } finally {
    Buffer.prototype.toString = original;
  }
}

describe('stream chunks as bytes', () => {
  it('a stream of N chunks whose client asked for usage arrives identical, byte for byte', async () => {
    upstreamStreams([...Array.from({ length: N }, (_, i) => event(i, ',"usage":null')), USAGE_CHUNK, DONE]);
    const got = await streamed({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(got.equals(Buffer.concat(chunks))).toBe(true);
  });

  it('with the usage hider on, only the usage pieces go; every other byte is the upstream’s, with no string per chunk', async () => {
    const events = Array.from({ length: N }, (_, i) => event(i, ',"usage":null'));
    // One event cut inside its "usage":null member, one cut inside a character (é is two bytes).
    const cutMember = events[10]!;
    const at = cutMember.indexOf('"usage"') + 3;
    const cutChar = events[20]!;
    const mid = cutChar.indexOf('é') + 1;
    const rule = upstreamStreams([
      ...events.slice(0, 10),
      cutMember.subarray(0, at),
      cutMember.subarray(at),
      ...events.slice(11, 20),
      cutChar.subarray(0, mid),
      cutChar.subarray(mid),
      ...events.slice(21),
      USAGE_CHUNK,
      DONE,
    ]);
    const { result: got, calls } = await countingToString(() =>
      streamed({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    );
    // Loopgate asked the upstream for usage; the client, which did not, gets the stream it would have had.
    expect(rule.seen[0]!.json?.stream_options).toEqual({ include_usage: true });
    const expected = Buffer.concat([...Array.from({ length: N }, (_, i) => event(i, '')), DONE]);
    expect(got.equals(expected)).toBe(true);
    console.log(`usage hider on, ${chunks.length} upstream chunks: ${calls} Buffer#toString calls in the process`);
    // Far fewer than one per chunk (what is left is per request: the log line, the record).
    expect(calls).toBeLessThan(N / 2);
  });
});
