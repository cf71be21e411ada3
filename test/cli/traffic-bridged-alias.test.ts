// `loopgate show` and `tail` (in-process, real sockets) on what a bridge or an alias
// changed, through a real proxy in front of the simulator: a bridged request's
// wire view says whose each body is (what the client sent and got, in its own
// protocol; what went upstream and came back, in Chat Completions), the
// client-side events are kept redacted, an aliased request says what was asked
// for and what served it, and a slow bridged stream's time is split between
// Loopgate and the upstream over the whole answer, not only up to its head.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, TOKEN, until, type Stack } from '../proxy/stack.js';
import { runCli } from './io.js';
import type { AliasMap } from '../../core/options.js';

const CANARY = 'sk-proj-canaryBridgedEvents0123456789abcdef';
let s: Stack;

beforeAll(async () => {
  const aliases: AliasMap = new Map([['fast-model', { to: 'gpt-4o-mini', source: '--alias' }]]);
  s = await startStack({ bridge: 'always', aliases });
});
afterAll(() => s.close());

const cli = (args: string[]) => runCli([...args, '--port', String(s.proxy.port)], { LOOPGATE_TOKEN: TOKEN });

/** A Responses stream over the bridge, read to its end; its Loopgate id once its ring entry is written. */
async function bridgedStream(input: string, headers: Record<string, string> = {}): Promise<string> {
  const { data, response } = await s
    .openai()
    .responses.create({ model: 'gpt-4o-mini', input, stream: true }, { headers })
    .withResponse();
  for await (const _ of data) void _;
  const id = response.headers.get('x-loopgate-request-id')!;
  expect(response.headers.get('x-loopgate-bridge')).toBe('responses->chat');
  await until(() => s.proxy.traffic!.get(id), 5000, 'the ring entry');
  return id;
}

describe('a bridged stream in show --wire', () => {
  it("labels both sides: the client's request and events (Responses), the translation and the upstream's chunks (Chat Completions)", async () => {
    const id = await bridgedStream(`remember ${CANARY}`);
    const r = await cli(['show', id, '--wire']);
    expect(r.code, r.err).toBe(0);
    const out = r.out;
    const at = (text: string) => {
      const i = out.indexOf(text);
      expect(i, text).toBeGreaterThan(-1);
      return i;
    };
    const request = at('> request body (from the client, Responses)');
    const translated = at("> sent upstream (the bridge's translation, Chat Completions)");
    const client = at('< the client received (Responses): events (');
    const upstream = at('< the upstream sent (Chat Completions, before the bridge translated it): events (');
    expect(request).toBeLessThan(translated);
    expect(client).toBeLessThan(upstream);
    // Each section holds its own side: Responses events under the client's, chat chunks under the upstream's.
    expect(out.slice(translated, client)).toContain('"messages"');
    expect(out.slice(client, upstream)).toContain('response.output_text.delta');
    expect(out.slice(client, upstream)).not.toContain('chat.completion.chunk');
    expect(out.slice(upstream)).toContain('chat.completion.chunk');
    expect(out.slice(upstream)).not.toContain('response.output_text.delta');
    // The client-side events are redacted like everything else in the ring, across the deltas the secret was split into.
    expect(out).not.toContain(CANARY);
    expect(s.proxy.traffic!.get(id)!.clientResponseBody).not.toContain(CANARY);
    expect(s.proxy.traffic!.get(id)!.clientResponseBody).toContain('[REDACTED');
    expect(s.proxy.traffic!.get(id)!.clientEventTimes!.length).toBeGreaterThan(2);
  });

  it("splits a slow bridged stream's time: the upstream's wait is the upstream's, not Loopgate's (and not just the ms to the head)", async () => {
    const id = await bridgedStream('slow', { 'x-sim-chunk-delay-ms': '120', 'x-sim-chunks': '4' });
    const entry = s.proxy.traffic!.get(id)!;
    // The head came at once (the simulator sends it before the first token): Server-Timing can only say those ms.
    expect(entry.record.responseHeaders!['server-timing']).toMatch(/^loopgate;dur=[\d.]+, upstream;dur=[\d.]+/);
    const t = entry.timing!;
    expect(t, 'the entry has a time split').toBeDefined();
    // Three pauses of 120 ms between the upstream's chunks are the upstream's time.
    expect(t.upstreamMs).toBeGreaterThanOrEqual(300);
    expect(t.loopgateMs).toBeLessThan(t.upstreamMs / 3);
    expect(t.loopgateMs + t.upstreamMs).toBeLessThanOrEqual(entry.record.totalMs + 1);
    const r = await cli(['show', id]);
    expect(r.out).toMatch(/time split\s+Loopgate [\d.]+ms, upstream \d+ms \(head to end\)/);
  });
});

describe('an aliased request', () => {
  it('says what was asked for and what served it, in tail and in show', async () => {
    const { response } = await s
      .openai()
      .chat.completions.create({ model: 'fast-model', messages: [{ role: 'user', content: 'alias me' }] })
      .withResponse();
    const id = response.headers.get('x-loopgate-request-id')!;
    await until(() => s.proxy.traffic!.get(id), 5000, 'the ring entry');
    const tail = await cli(['tail', '--no-follow', '--lines', '1']);
    expect(tail.code, tail.err).toBe(0);
    expect(tail.out).toMatch(
      new RegExp(`${id.slice(0, 8)} POST /v1/chat/completions 200 asked for fast-model, served as gpt-4o-mini `),
    );
    const shown = await cli(['show', id]);
    expect(shown.out).toMatch(/model\s+asked for fast-model, served as gpt-4o-mini \(model alias\)/);
    // The Traffic view's list reads rows: they carry the alias, so its row can say both.
    const rows = (await (
      await fetch(`${s.proxy.url}/_loopgate/traffic?rows=1&limit=5`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { entries: Array<{ record: { id: string; alias?: unknown } }> };
    expect(rows.entries.find((e) => e.record.id === id)!.record.alias).toEqual({
      from: 'fast-model',
      to: 'gpt-4o-mini',
    });
  });
});
