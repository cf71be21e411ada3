// A team's collector sees the agent session and what it cost: each span carries
// the session id as gen_ai.conversation.id, the cache tokens by the GenAI
// conventions' names and the estimated cost (loopgate.cost.*, as the
// conventions name no cost attribute yet), from the live proxy and from
// `loopgate export --otlp` of the log alike. No key and no token in any of it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { otlpConfig } from '../../rules/otlp/otlp-config.js';
import { runCli } from '../cli/io.js';
import { KEYS, logRecords, startStack, TOKEN, until, type Stack, namedKeys } from '../proxy/stack.js';
import { fastEnv, startReceiver, type Receiver, type ReceivedSpan } from './receiver.js';

const CLAUDE_SESSION = 'c3c3c3c3-0000-4000-8000-00000000000c';
/** The id the proxy gives the session Claude Code names: `<client>:<its id>`. */
const SESSION = `claude-code:${CLAUDE_SESSION}`;

function configFor(env: NodeJS.ProcessEnv) {
  const r = otlpConfig(env);
  if (!r.ok || !r.config) throw new Error(r.ok ? 'no config' : r.problem);
  return r.config;
}

function spanOf(receiver: Receiver, id: string): Promise<ReceivedSpan> {
  return until(
    () => receiver.spans.find((s) => s.attributes['loopgate.request.id'] === id),
    5000,
    `the span of request ${id}`,
  );
}

function noSecrets(receiver: Receiver): void {
  const all = receiver.bodies.map((b) => b.toString('latin1')).join('\n') + receiver.decoded.join('\n');
  for (const s of [TOKEN, KEYS.default, KEYS.claude]) expect(all).not.toContain(s);
}

describe('OTLP: the session and its cost on every span', () => {
  let receiver: Receiver;
  let stack: Stack;
  const ids: string[] = [];
  beforeAll(async () => {
    receiver = await startReceiver();
    stack = await startStack({
      key: undefined,
      keys: namedKeys({ default: KEYS.default, claude: KEYS.claude }),
      otlp: configFor(fastEnv(receiver.url)),
    });
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  it('live: gen_ai.conversation.id, the cache tokens and the estimated cost, as the record has them', async () => {
    const client = stack.anthropic(undefined, TOKEN);
    for (const content of ['first turn', 'second turn']) {
      const r = await client.messages
        .create(
          { model: 'claude-sonnet-4-6', max_tokens: 32, messages: [{ role: 'user', content }] },
          { headers: { 'x-claude-code-session-id': CLAUDE_SESSION } },
        )
        .withResponse();
      ids.push(r.response.headers.get('x-loopgate-request-id')!);
    }
    const entry = stack.proxy.traffic!.list({ limit: 10 }).find((e) => e.record.id === ids[1])!;
    const rec = entry.record;
    expect(rec.session?.id).toBe(SESSION);
    const a = (await spanOf(receiver, ids[1]!)).attributes;
    expect(a).toMatchObject({
      'gen_ai.conversation.id': SESSION,
      'loopgate.session.source': 'header',
      'loopgate.session.client': 'claude-code',
    });
    // The cache tokens and the cost exactly as the record has them (none where it has none: never a made-up 0).
    const t = rec.tokens;
    expect(a['gen_ai.usage.cache_read.input_tokens']).toBe(t?.cacheRead);
    expect(a['gen_ai.usage.cache_creation.input_tokens']).toBe(t && t.cacheWrite5m + t.cacheWrite1h);
    const cost = rec.cost;
    expect(a['loopgate.cost.estimated_usd']).toBe(cost && 'estimated' in cost ? cost.estimated : undefined);
    expect(a['loopgate.cost.priced_as']).toBe(cost && 'estimated' in cost ? cost.pricedAs : undefined);
    expect(a['loopgate.cost.no_price']).toBe(cost && 'noPrice' in cost ? true : undefined);
    // Both turns on one conversation id.
    expect((await spanOf(receiver, ids[0]!)).attributes['gen_ai.conversation.id']).toBe(SESSION);
    noSecrets(receiver);
  });

  it('`export --otlp` of the log sends the same session and cost attributes', async () => {
    await until(
      () => (ids.every((id) => logRecords(stack.logFile).some((r) => r.id === id)) ? true : undefined),
      5000,
      'the log records',
    );
    const later = await startReceiver();
    try {
      const r = await runCli(['export', '--log', stack.logFile, '--otlp', later.url], {
        OTEL_BSP_SCHEDULE_DELAY: '10',
      });
      expect(r.code, r.err).toBe(0);
      const live = (await spanOf(receiver, ids[1]!)).attributes;
      const replayed = (await spanOf(later, ids[1]!)).attributes;
      for (const k of Object.keys(live).filter((k) => /conversation|cache|cost|session/.test(k)))
        expect(replayed[k], k).toEqual(live[k]);
      expect(replayed['gen_ai.conversation.id']).toBe(SESSION);
      noSecrets(later);
    } finally {
      await later.close();
    }
  });
});

describe('OTLP: a logged record with its session, tokens and cost', () => {
  const base = {
    method: 'POST',
    path: '/v1/messages',
    canonicalPath: '/v1/messages',
    rewrites: [],
    model: 'claude-sonnet-4-5',
    status: 200,
    key: 'claude',
    totalMs: 120,
    bytesIn: 300,
    bytesOut: 500,
    retries: 0,
    clientAborted: false,
    usage: { input: 1200, output: 50 },
  } satisfies Partial<TrafficRecord>;
  const priced: TrafficRecord = {
    ...base,
    time: new Date().toISOString(),
    id: 'priced-0000-4000-8000-000000000001',
    tokens: { input: 200, output: 50, cacheRead: 900, cacheWrite5m: 60, cacheWrite1h: 40, reasoning: 7 },
    cost: { estimated: 0.00162, currency: 'USD', pricedAs: 'claude-sonnet-4-5', source: 'genai-prices' },
    session: { id: SESSION, source: 'header', client: 'claude-code', agent: 'Explore' },
  };
  const unpriced: TrafficRecord = {
    ...base,
    time: new Date().toISOString(),
    id: 'unpriced-0000-4000-8000-000000000002',
    model: 'house-model',
    tokens: { input: 100, output: 20, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0 },
    cost: { noPrice: 'No price for "house-model": add it to loopgate.json "prices".' },
    session: { id: 'run-1', source: 'run', client: 'codex', run: { tool: 'codex', started: new Date().toISOString() } },
  };
  const before: TrafficRecord = { ...base, time: new Date().toISOString(), id: 'before-0000-4000-8000-000000000003' };

  it("each becomes the conventions' conversation id and cache tokens, and loopgate.cost.*", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-otlp-session-'));
    const log = join(dir, 'traffic.jsonl');
    writeFileSync(log, [priced, unpriced, before].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const receiver = await startReceiver();
    try {
      const r = await runCli(['export', '--log', log, '--otlp', receiver.url], { OTEL_BSP_SCHEDULE_DELAY: '10' });
      expect(r.code, r.err).toBe(0);
      expect((await spanOf(receiver, priced.id)).attributes).toMatchObject({
        'gen_ai.conversation.id': SESSION,
        'loopgate.session.source': 'header',
        'loopgate.session.client': 'claude-code',
        'loopgate.session.agent': 'Explore',
        'gen_ai.usage.input_tokens': 1200,
        'gen_ai.usage.cache_read.input_tokens': 900,
        'gen_ai.usage.cache_creation.input_tokens': 100,
        'gen_ai.usage.reasoning.output_tokens': 7,
        'loopgate.cost.estimated_usd': 0.00162,
        'loopgate.cost.priced_as': 'claude-sonnet-4-5',
        'loopgate.cost.price_source': 'genai-prices',
      });
      const u = (await spanOf(receiver, unpriced.id)).attributes;
      expect(u).toMatchObject({
        'gen_ai.conversation.id': 'run-1',
        'loopgate.session.source': 'run',
        'loopgate.session.run.tool': 'codex',
        'loopgate.cost.no_price': true,
        'gen_ai.usage.cache_read.input_tokens': 0,
      });
      // Never $0.00 for a model without a price.
      expect(u['loopgate.cost.estimated_usd']).toBeUndefined();
      // A line logged before sessions: none of it, and nothing made up.
      const b = (await spanOf(receiver, before.id)).attributes;
      expect(Object.keys(b).filter((k) => /conversation|cache|cost|session/.test(k))).toEqual([]);
      expect(receiver.errors).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});
