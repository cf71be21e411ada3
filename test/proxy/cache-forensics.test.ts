// Cache forensics and the context breakdown through a real proxy and the
// simulator (which caches like the service), with the official Anthropic SDK as
// a Claude Code-like client that names its session (issue 33 §3, §4): an
// unchanged prefix is a hit, a changed system block is named with its pointer,
// a gap past 5 minutes on an injected clock is a TTL lapse; the detail answer
// and the session answer both carry them.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TrafficDetail } from '../../core/local-api.js';
import { localApi } from '../../client/local-api-client.js';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { stopTokenizer } from '../../analysis/tokenizers.js';
import { KEYS, TOKEN } from './stack.js';

let sim: Simulator;
let proxy: RunningProxy;
let anthropic: Anthropic;
const session = randomUUID();

// Past Sonnet's 1,024-token minimum at the simulator's 4 characters a token.
const LONG = 'The quick brown fox jumps over the lazy dog. '.repeat(134);
const system = (middle: string): Anthropic.TextBlockParam[] => [
  { type: 'text', text: 'You are a coding agent.' },
  { type: 'text', text: middle },
  { type: 'text', text: LONG, cache_control: { type: 'ephemeral' } },
];
const tools: Anthropic.Tool[] = [
  {
    name: 'Read',
    description: 'Read a file',
    input_schema: { type: 'object', properties: { path: { type: 'string' } } },
  },
  { name: 'mcp__github__create_issue', description: 'Open an issue', input_schema: { type: 'object' } },
];

beforeAll(async () => {
  // The proxy stamps records with Date; the simulator's cache reads the same clock.
  vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-11-28T03:00:00Z') });
  sim = await startSimulator({ port: 0, clock: () => Date.now() });
  proxy = await startProxy({
    upstream: sim.baseUrl,
    key: KEYS.claude,
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile: join(mkdtempSync(join(tmpdir(), 'loopgate-forensics-')), 'traffic.jsonl'),
  });
  await proxy.refreshModels();
  anthropic = new Anthropic({
    baseURL: proxy.url,
    apiKey: TOKEN,
    maxRetries: 0,
    defaultHeaders: { 'x-claude-code-session-id': session },
  });
});

afterAll(async () => {
  vi.useRealTimers();
  await proxy?.close();
  await sim?.close();
  await stopTokenizer();
});

const api = () => localApi({ url: proxy.url, token: TOKEN });

async function turn(middle: string, messages: Anthropic.MessageParam[]) {
  const { response } = await anthropic.messages
    .create({ model: 'claude-sonnet-4-6', max_tokens: 30, system: system(middle), tools, messages })
    .withResponse();
  const id = response.headers.get('x-loopgate-request-id')!;
  return (await api().entry(id)) as TrafficDetail;
}

describe('cache forensics through the proxy', () => {
  const m1: Anthropic.MessageParam[] = [{ role: 'user', content: 'Read a.ts' }];
  const m2: Anthropic.MessageParam[] = [
    ...m1,
    { role: 'assistant', content: 'It exports a constant.' },
    { role: 'user', content: 'And b.ts?' },
  ];
  let first: TrafficDetail;
  let second: TrafficDetail;

  it('the first turn writes the cache; an unchanged prefix next is a hit, with the context and its growth', async () => {
    first = await turn('Project: loopgate.', m1);
    expect(first.cache).toMatchObject({ verdict: 'miss', cause: { kind: 'first-turn' } });
    expect(first.cache!.written).toBeGreaterThan(1000);
    vi.setSystemTime(Date.now() + 30_000);
    second = await turn('Project: loopgate.', m2);
    expect(second.cache).toMatchObject({ verdict: 'hit', previous: { seq: first.seq, id: first.record.id } });
    expect(second.cache!.cause).toBeUndefined();
    expect(second.cache!.summary).toMatch(/^cache: \d+ % — prefix reused/);
    const ctx = second.context!;
    expect(ctx).toMatchObject({ exact: true, estimated: true, tokenizer: 'o200k_base' });
    expect(ctx.parts.map((p) => p.label)).toEqual([
      'system',
      'tools: mcp__github (1)',
      'tools: built-in (1)',
      'conversation history',
      'tool results',
      'new turn',
    ]);
    expect(ctx.parts.reduce((s, p) => s + p.tokens, 0)).toBe(ctx.total);
    expect(ctx.growth).toEqual({
      tokens: ctx.total - first.context!.total,
      previous: { seq: first.seq, id: first.record.id },
    });
    expect(ctx.growth!.tokens).toBeGreaterThan(0);
  });

  it('a changed system block between two turns names that block', async () => {
    vi.setSystemTime(Date.now() + 30_000);
    const changed = await turn('Project: loopgate (renamed).', m2);
    expect(changed.cache).toMatchObject({
      verdict: 'miss',
      cause: {
        kind: 'changed',
        region: { part: 'system', index: 1, label: 'system block 1', pointer: '/system/1/text' },
      },
      previous: { seq: second.seq },
    });
    expect(changed.cache!.summary).toMatch(/^cache: 0 % — system block 1 changed, [\d,]+ tokens re-written$/);
  });

  it('a pause past 5 minutes on the injected clock is named as a TTL lapse', async () => {
    vi.setSystemTime(Date.now() + 6 * 60_000);
    const late = await turn('Project: loopgate (renamed).', m2);
    expect(late.cache).toMatchObject({ verdict: 'miss', cause: { kind: 'ttl-lapsed', ttl: '5m' } });
    expect((late.cache!.cause as { gapMs: number }).gapMs).toBeGreaterThan(5 * 60_000);
    expect(late.cache!.summary).toMatch(/^cache: 0 % — 6 min since the previous turn \(cache TTL 5 min\)/);
  });

  it("the session answer carries each turn's cache outcome and context, and the detail its session", async () => {
    expect(second.session).toMatchObject({ source: 'header', client: expect.any(String) });
    const { turns } = await api().session(second.session!.id);
    expect(turns.length).toBe(4);
    expect(turns.map((t) => t.cache?.verdict)).toEqual(['miss', 'hit', 'miss', 'miss']);
    expect(turns.map((t) => t.cache?.cause?.kind)).toEqual(['first-turn', undefined, 'changed', 'ttl-lapsed']);
    expect(turns[1]!.context).toEqual(second.context);
  });
});
