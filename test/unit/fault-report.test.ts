// The fault report (rules/faults/fault-report.ts): which later requests are retries of a
// faulted one, how long the client waited against the retry-after, a switch of
// model or key, the tokens the failure cost, when a verdict is settled, and the
// one-line summary. Records built by hand, as the ring holds them.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { InjectedFault } from '../../core/fault.js';
import type { TokenCounts } from '../../core/token-counts.js';
import {
  faultVerdicts,
  follow,
  openTrace,
  retryIdentity,
  verdictOf,
  MAX_ATTEMPTS_LISTED,
  RETRY_AFTER_ALLOWANCE_MS,
  type ReportEntry,
  type ReportRecord,
} from '../../rules/faults/fault-report.js';

const T0 = Date.parse('2026-11-28T06:00:00.000Z');
const OPTS = { quietMs: 60_000 };
const F429: InjectedFault = { ruleId: 1, rule: '429 times=1 retry-after=2', kind: '429', retryAfterS: 2 };
const F500: InjectedFault = { ruleId: 2, rule: '500', kind: '500' };
const BODY = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };

function tokens(input: number, output: number): TokenCounts {
  return { input, output, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0 };
}

let seq = 0;
/** One ring entry: `at` ms after T0 it started, `ms` long. */
function entry(
  at: number,
  ms: number,
  over: Partial<ReportRecord> = {},
  body: unknown = BODY,
): ReportEntry & { asked: () => number } {
  seq++;
  let asked = 0;
  const record: ReportRecord = {
    id: `req-${seq}`,
    time: new Date(T0 + at).toISOString(),
    totalMs: ms,
    status: 200,
    method: 'POST',
    path: '/v1/messages',
    model: (body as { model?: string }).model,
    key: 'default',
    retries: 0,
    clientAborted: false,
    ...over,
  } as ReportRecord;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    seq,
    record,
    identity: () => (asked++, retryIdentity(text)),
    asked: () => asked,
  };
}

describe('the fault report', () => {
  it('finds one retry that waited out the retry-after, and its success', () => {
    const fault = entry(0, 5, { status: 429, fault: F429 });
    const other = entry(100, 50, {}, { ...BODY, messages: [{ role: 'user', content: 'something else' }] });
    const retry = entry(2015, 300, { tokens: tokens(10, 5) });
    const [v] = faultVerdicts([fault, other, retry], T0 + 3000, OPTS);
    expect(v).toMatchObject({
      id: fault.record.id,
      retried: true,
      retries: 1,
      firstWaitMs: 2010,
      honouredRetryAfter: true,
      succeeded: true,
      succeededId: retry.record.id,
      settled: true,
      model: 'claude-sonnet-4-5',
      key: 'default',
      path: '/v1/messages',
    });
    expect(v!.attempts).toEqual([
      expect.objectContaining({ id: retry.record.id, status: 200, waitedMs: 2010, tokens: tokens(10, 5) }),
    ]);
    // The success's own tokens are not the failure's cost.
    expect(v!.tokensSpent).toEqual(tokens(0, 0));
    expect(v!.summary).toBe('retried once after 2.01 s (retry-after 2 s: honoured), then succeeded');
  });

  it('says a retry too soon did not honour the retry-after, with the allowance stated', () => {
    const fault = entry(0, 5, { status: 429, fault: F429 });
    const early = entry(5 + 2000 - RETRY_AFTER_ALLOWANCE_MS - 1, 20);
    expect(faultVerdicts([fault, early], T0 + 10_000, OPTS)[0]).toMatchObject({ honouredRetryAfter: false });
    const fault2 = entry(0, 5, { status: 429, fault: F429 });
    const justIn = entry(5 + 2000 - RETRY_AFTER_ALLOWANCE_MS, 20);
    expect(faultVerdicts([fault2, justIn], T0 + 10_000, OPTS)[0]).toMatchObject({ honouredRetryAfter: true });
    expect(faultVerdicts([fault, early], T0 + 10_000, OPTS)[0]!.summary).toContain('not honoured');
  });

  it('takes the same body with another model for a fallback, and another key name for a key switch', () => {
    const fault = entry(0, 5, { status: 500, fault: F500 });
    const fallback = entry(400, 100, { key: 'backup' }, { ...BODY, model: 'claude-haiku-4-5' });
    const [v] = faultVerdicts([fault, fallback], T0 + 1000, OPTS);
    expect(v).toMatchObject({ retries: 1, switchedModel: 'claude-haiku-4-5', switchedKey: 'backup', succeeded: true });
    expect(v!.honouredRetryAfter).toBeUndefined();
    expect(v!.summary).toBe(
      'retried once after 0.40 s (no retry-after: its own backoff), switched model claude-sonnet-4-5 → claude-haiku-4-5, switched key default → backup, then succeeded',
    );
  });

  it('ignores key order, per-run ids and metadata, but not a changed prompt', () => {
    const a = retryIdentity(
      JSON.stringify({ model: 'a', metadata: { user_id: 'u1' }, messages: [{ role: 'user', content: 'x' }] }),
    );
    const b = retryIdentity(
      JSON.stringify({ messages: [{ content: 'x', role: 'user' }], model: 'b', metadata: { user_id: 'u2' } }),
    );
    const c = retryIdentity(JSON.stringify({ model: 'a', messages: [{ role: 'user', content: 'y' }] }));
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(retryIdentity('x', 'streamed')).toBeUndefined();
    expect(retryIdentity('not json')).toBe(retryIdentity('not json'));
  });

  it('counts a chain of faults: tokens of every failed answer until the success, cost summed', () => {
    const cut: InjectedFault = { ruleId: 3, rule: 'cut events=3 times=2', kind: 'cut', afterEvents: 3 };
    const cost = (usd: number) => ({
      estimated: usd,
      currency: 'USD' as const,
      pricedAs: 'x',
      source: 'genai-prices' as const,
    });
    const f1 = entry(0, 100, {
      status: 200,
      fault: cut,
      errorCode: 'stream-cut',
      tokens: tokens(100, 7),
      cost: cost(0.001),
    });
    const f2 = entry(300, 100, {
      status: 200,
      fault: cut,
      errorCode: 'stream-cut',
      tokens: tokens(100, 9),
      cost: cost(0.002),
    });
    const ok = entry(900, 200, { tokens: tokens(100, 40), cost: cost(0.01) });
    const [v1, v2] = faultVerdicts([f1, f2, ok], T0 + 2000, OPTS);
    expect(v1).toMatchObject({ retries: 2, succeeded: true, firstWaitMs: 200, tokensSpent: tokens(200, 16) });
    expect(v1!.costUsd).toBeCloseTo(0.003, 10);
    expect(v1!.attempts.map((a) => [a.waitedMs, a.fault?.kind])).toEqual([
      [200, 'cut'],
      [500, undefined],
    ]);
    expect(v1!.summary).toBe(
      'retried twice, first after 0.20 s (no retry-after: its own backoff), then succeeded; 216 tokens ($0.003) spent on failed answers',
    );
    // The second fault has its own verdict: one retry.
    expect(v2).toMatchObject({ retries: 1, succeeded: true, firstWaitMs: 500 });
  });

  it('is not settled while the client may still retry, and settled after the quiet time', () => {
    const fault = entry(0, 5, { status: 429, fault: F429 });
    const opts = { quietMs: 1000 };
    // The quiet time counts from the end of the answer, plus the retry-after given.
    expect(faultVerdicts([fault], T0 + 5 + 3000, opts)[0]).toMatchObject({
      settled: false,
      retried: false,
      summary: 'no retry yet',
    });
    expect(faultVerdicts([fault], T0 + 5 + 3001, opts)[0]).toMatchObject({
      settled: true,
      succeeded: false,
      summary: 'not retried',
    });
    // A failed retry, then nothing: never succeeded.
    const again = entry(2100, 5, { status: 503 });
    expect(faultVerdicts([fault, again], T0 + 20_000, opts)[0]!.summary).toBe(
      'retried once after 2.10 s (retry-after 2 s: honoured), never succeeded',
    );
    expect(faultVerdicts([fault, again], T0 + 2200, opts)[0]!.summary).toContain('not succeeded yet');
  });

  it('does not take the same request after the quiet time, or sent alongside, or in another session, for a retry', () => {
    const ses = (id: string) => ({ session: { id, source: 'header' as const, client: 'claude-code' } });
    const fault = entry(1000, 500, { status: 429, fault: F429, ...ses('s1') });
    const alongside = entry(1200, 50, ses('s1'));
    const otherSession = entry(3600, 50, ses('s2'));
    const otherPath = entry(3600, 50, { path: '/v1/chat/completions', ...ses('s1') });
    const late = entry(1500 + 62_001, 50, ses('s1'));
    const [v] = faultVerdicts([fault, alongside, otherSession, otherPath, late], T0 + 100_000, OPTS);
    expect(v).toMatchObject({ retried: false, settled: true, session: 's1' });
    // A request with no session may still be the retry of one that has one (a client that names none).
    const noSession = entry(3600, 50);
    expect(faultVerdicts([fault, noSession], T0 + 5000, OPTS)[0]).toMatchObject({ retries: 1 });
  });

  it('reads a body only for a request that could be a retry, and once', () => {
    const fault = entry(0, 5, { status: 429, fault: F429 });
    const elsewhere = entry(100, 5, { path: '/v1/chat/completions' });
    const candidate = entry(2100, 5);
    const trace = openTrace(fault)!;
    for (const e of [elsewhere, candidate]) follow(trace, e, OPTS);
    follow(trace, candidate, OPTS); // fed twice: the second is ignored
    expect(elsewhere.asked()).toBe(0);
    expect(candidate.asked()).toBe(1);
    expect(verdictOf(trace, T0 + 3000, OPTS).retries).toBe(1);
  });

  it('follows a WebSocket close by the next connection', () => {
    const ws = { websocket: { messagesIn: 1, messagesOut: 3, requests: 1 } };
    const close: InjectedFault = { ruleId: 4, rule: 'ws-close code=1011', kind: 'ws-close', closeCode: 1011 };
    const fault = entry(0, 900, { status: 101, method: 'GET', path: '/v1/responses', fault: close, ...ws }, '');
    const next = entry(1400, 2000, { status: 101, method: 'GET', path: '/v1/responses', ...ws }, '');
    expect(faultVerdicts([fault, next], T0 + 5000, OPTS)[0]).toMatchObject({
      retries: 1,
      succeeded: true,
      firstWaitMs: 500,
    });
  });

  it('lists at most MAX_ATTEMPTS_LISTED attempts of a client in a retry loop, and counts them all', () => {
    const all: ReportEntry[] = [entry(0, 10, { status: 500, fault: F500 })];
    for (let i = 1; i <= MAX_ATTEMPTS_LISTED + 50; i++) all.push(entry(i * 100, 10, { status: 500 }));
    const [v] = faultVerdicts(all, T0 + 20_000, OPTS);
    expect(v!.retries).toBe(MAX_ATTEMPTS_LISTED + 50);
    expect(v!.attempts).toHaveLength(MAX_ATTEMPTS_LISTED);
    expect(v!.summary).toBe(
      `retried ${MAX_ATTEMPTS_LISTED + 50} times, first after 0.09 s (no retry-after: its own backoff), not succeeded yet`,
    );
  });

  it('property: retries are counted whatever else is interleaved, and waits add up to the gaps', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.integer({ min: 0, max: 5000 }), noise: fc.boolean(), fails: fc.boolean() }), {
          maxLength: 12,
        }),
        (steps) => {
          const all: ReportEntry[] = [entry(0, 10, { status: 429, fault: F429 })];
          let end = 10;
          let retries = 0;
          let succeeded = false;
          for (const s of steps) {
            if (s.noise) all.push(entry(end + 1, 5, {}, { ...BODY, messages: [] }));
            if (succeeded) continue;
            all.push(entry(end + s.gap, 10, s.fails ? { status: 500 } : {}));
            end += s.gap + 10;
            retries++;
            if (!s.fails) succeeded = true;
          }
          const [v] = faultVerdicts(all, T0 + end + 1, OPTS);
          expect(v!.retries).toBe(retries);
          expect(v!.succeeded).toBe(succeeded);
          expect(v!.attempts.reduce((n, a) => n + a.waitedMs, 0)).toBe(end - 10 - 10 * retries);
        },
      ),
    );
  });
});
