// The fault book's counters and choice (pipeline/fault-book.ts) and the answers' shapes
// (rules/faults/fault-answers.ts), with an injected clock: no waiting.
import { describe, expect, it } from 'vitest';
import { FaultBook, type FaultRequest } from '../../proxy/pipeline/fault-book.js';
import { parseFaultRule } from '../../rules/faults/fault-rules.js';
import { statusFaultAnswer, streamErrorEvent } from '../../rules/faults/fault-answers.js';
import type { FaultRule } from '../../core/fault.js';
import { readProjectFile } from '../../rules/project/project-file.js';

function rule(text: string): FaultRule {
  const parsed = parseFaultRule(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.rule;
}

const chat: FaultRequest = {
  path: '/v1/chat/completions',
  protocol: 'chat',
  model: 'gpt-4o',
  streaming: false,
  websocket: false,
};
const stream: FaultRequest = { ...chat, streaming: true };
const ws: FaultRequest = { path: '/v1/responses', protocol: 'responses', streaming: true, websocket: true };

describe('FaultBook', () => {
  it('is not armed until a rule is, and not after the last is disarmed or spent', () => {
    const book = new FaultBook();
    expect(book.armed).toBe(false);
    const a = book.arm(rule('429 times=1'), 'cli');
    expect(book.armed).toBe(true);
    expect(book.take(chat)?.id).toBe(a.id);
    expect(book.armed).toBe(false);
    book.arm(rule('500'), 'api');
    expect(book.disarm()).toBe(2);
    expect(book.armed).toBe(false);
  });

  it('skip, then times; the first live rule in scope decides', () => {
    const book = new FaultBook();
    const first = book.arm(rule('429 skip=1 times=2 model=gpt-*'), 'cli');
    const second = book.arm(rule('500'), 'cli');
    expect(book.take(chat)).toBeUndefined(); // skipped by the first: it goes through
    expect(book.take(chat)?.id).toBe(first.id);
    expect(book.take(chat)?.id).toBe(first.id);
    expect(book.take(chat)?.id).toBe(second.id); // the first is spent
    expect(book.take({ ...chat, model: 'claude-x' })?.id).toBe(second.id);
    expect(book.list()[0]).toMatchObject({ matched: 3, injected: 2, remaining: 0, spent: true });
  });

  it('for=: spent once its window has passed (the clock is the book’s)', () => {
    let now = 1_000_000;
    const book = new FaultBook(() => now);
    book.arm(rule('503 for=30s'), 'config');
    expect(book.take(chat)?.rule.kind).toBe('503');
    now += 30_001;
    expect(book.take(chat)).toBeUndefined();
    expect(book.armed).toBe(false);
    expect(book.list()[0]!.spent).toBe(true);
  });

  it('mid-stream kinds only on streams; ws-close only on WebSockets; status kinds never on WebSockets', () => {
    const book = new FaultBook();
    book.arm(rule('cut times=1'), 'cli');
    expect(book.take(chat)).toBeUndefined();
    expect(book.list()[0]!.matched).toBe(0);
    expect(book.take(stream)?.rule.kind).toBe('cut');
    book.disarm();
    book.arm(rule('ws-close'), 'cli');
    expect(book.take(stream)).toBeUndefined();
    expect(book.take(ws)?.rule.closeCode).toBe(1011);
    book.disarm();
    book.arm(rule('429'), 'cli');
    expect(book.take(ws)).toBeUndefined();
  });

  it('needsSession only while a live rule scopes by session; `times` from the API overrides the rule', () => {
    const book = new FaultBook();
    const a = book.arm(rule('429 session=codex:abc'), 'api', 1);
    expect(book.needsSession).toBe(true);
    expect(a.remaining).toBe(1);
    expect(book.take({ ...chat, session: 'codex:other' })).toBeUndefined();
    expect(book.take({ ...chat, session: 'codex:abc' })?.id).toBe(a.id);
    expect(book.needsSession).toBe(false);
  });
});

describe('fault answers', () => {
  const facts = { ruleId: 3, now: Date.UTC(2026, 0, 1), requestId: 'req_x' };
  it('429: OpenAI headers and body for chat and responses, Anthropic for messages', () => {
    const o = statusFaultAnswer({ ...facts, kind: '429', protocol: 'responses' });
    expect(o.headers).toMatchObject({ 'retry-after': '1', 'retry-after-ms': '1000', 'x-ratelimit-reset-tokens': '1s' });
    expect(JSON.parse(o.body)).toMatchObject({ error: { code: 'rate_limit_exceeded', param: null } });
    const a = statusFaultAnswer({ ...facts, kind: '429', protocol: 'messages', retryAfterS: 90 });
    expect(a.headers).toMatchObject({
      'retry-after': '90',
      'anthropic-ratelimit-unified-status': 'rejected',
      'anthropic-ratelimit-unified-reset': String(facts.now / 1000 + 90),
      'anthropic-ratelimit-requests-reset': '2026-01-01T00:01:30Z',
      'request-id': 'req_x',
    });
    expect(JSON.parse(a.body)).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_error' },
      request_id: 'req_x',
    });
  });

  it('5xx carry a retry-after only when the rule gives one', () => {
    expect(statusFaultAnswer({ ...facts, kind: '503', protocol: 'chat' }).headers['retry-after']).toBeUndefined();
    expect(statusFaultAnswer({ ...facts, kind: '503', protocol: 'chat', retryAfterS: 4 }).headers['retry-after']).toBe(
      '4',
    );
  });

  it("each protocol's error event", () => {
    expect(streamErrorEvent('messages', 1, 2, 'resp_1')).toMatch(/^event: error\ndata: \{"type":"error"/);
    expect(streamErrorEvent('responses', 1, 2, 'resp_1')).toMatch(/^event: response\.failed\ndata: /);
    expect(streamErrorEvent('chat', 1, 2, 'resp_1')).toMatch(/^data: \{"error":\{/);
  });
});

describe('loopgate.json "faults"', () => {
  it('keeps the rules that parse, in order, and marks each bad one where it is written', () => {
    const text = '{ "faults": ["429 times=2", "430", 5, "cut events=3"] }';
    const read = readProjectFile(text);
    expect(read.faults.map((f) => f.text)).toEqual(['429 times=2', 'cut events=3']);
    expect(read.problems.map((p) => [p.severity, text.slice(p.start, p.end)])).toEqual([
      ['error', '"430"'],
      ['error', '5'],
    ]);
    expect(read.problems[0]!.message).toMatch(/^Fault rule: A fault starts with its kind/);
    expect(readProjectFile('{ "faults": "429" }').problems[0]!.message).toContain('must be an array');
  });
});
