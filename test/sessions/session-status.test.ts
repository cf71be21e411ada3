// What the session status bar item says (issue 33 §5): the active session's
// estimated cost and cache ratio, and the newest rate-limit headroom, with the
// warning before it runs out (under a tenth left, or Anthropic's own
// allowed_warning), the error level once it has, and nothing stale after a reset.
import { describe, expect, it } from 'vitest';
import type { RateLimitHeadroom, SessionSummary } from '../../core/agent-session.js';
import { headroomView, sessionCostText } from '../../extension/sessions/session-format.js';
import { formatUsd } from '../../rules/sessions/usd.js';
import { sessionStatus } from '../../extension/sessions/session-status.js';
import { bareSession } from '../kit/sessions.js';

const now = new Date('2026-11-28T03:00:00.000Z');
const later = '2026-11-28T03:00:30.000Z';
const earlier = '2026-11-28T02:59:00.000Z';

function session(id: string, over: Partial<SessionSummary> = {}): SessionSummary {
  return bareSession({
    id,
    requests: 3,
    turns: 3,
    tokens: { input: 1, output: 1, cacheRead: 1, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0, cacheWrite: 0 },
    cost: { estimated: 0.0412, currency: 'USD', unpriced: 0 },
    cacheHitRatio: 0.834,
    ...over,
  });
}

const openai = (over: Partial<RateLimitHeadroom> = {}): RateLimitHeadroom => ({
  style: 'openai',
  requests: { limit: 500, remaining: 480, reset: later },
  tokens: { limit: 200_000, remaining: 150_000, reset: later },
  seenAt: '2026-11-28T02:59:59.000Z',
  ...over,
});

describe('cost words', () => {
  it('prices in dollars with enough digits, and never writes $0.00 for a session without a price', () => {
    expect([12.345, 1, 0.0123, 0.000418, 0.000021000000000000002, 1e-8, 0.005, 0].map(formatUsd)).toEqual([
      '$12.35',
      '$1.00',
      '$0.0123',
      '$0.000418',
      '$0.000021',
      '$0.00000001',
      '$0.005',
      '$0',
    ]);
    expect(sessionCostText({ cost: null })).toBe('no price');
    expect(sessionCostText({ cost: { estimated: 0.5, currency: 'USD', unpriced: 0 } })).toBe('$0.5 estimated');
  });
});

describe('rate-limit headroom', () => {
  it('plenty left: ok, the tightest window in short', () => {
    const v = headroomView(openai(), now)!;
    expect(v.level).toBe('ok');
    expect(v.short).toBe('150k/200k tok');
    expect(v.lines[0]).toBe('480 of 500 requests left, resets in 30 s (03:00:30 UTC)');
  });

  it('under a tenth of a window left: warning; none left: exhausted', () => {
    expect(headroomView(openai({ tokens: { limit: 200_000, remaining: 19_999, reset: later } }), now)).toMatchObject({
      level: 'warning',
      short: '20k/200k tok',
    });
    expect(headroomView(openai({ requests: { limit: 500, remaining: 50, reset: later } }), now)!.level).toBe('ok');
    expect(headroomView(openai({ requests: { limit: 500, remaining: 0, reset: later } }), now)!.level).toBe(
      'exhausted',
    );
  });

  it("Anthropic's unified status: allowed_warning warns, rejected has run out", () => {
    const unified = (status: string, utilization?: number): RateLimitHeadroom => ({
      style: 'anthropic',
      unified: { status, reset: later, utilization },
      seenAt: earlier,
    });
    expect(headroomView(unified('allowed'), now)).toMatchObject({ level: 'ok', short: 'allowed' });
    expect(headroomView(unified('allowed_warning', 0.93), now)).toMatchObject({ level: 'warning', short: '93 % used' });
    expect(headroomView(unified('rejected'), now)!.level).toBe('exhausted');
    // A status from a header that is not a plain word never reaches the status bar's text.
    expect(headroomView(unified('$(bug) x'), now)!.short).toBe('unified limit');
  });

  it('after every window has reset, the figures are history: no warning', () => {
    const v = headroomView(openai({ requests: { limit: 500, remaining: 0, reset: earlier }, tokens: undefined }), now)!;
    expect(v).toMatchObject({ level: 'ok', stale: true });
    expect(v.lines[0]).toContain('reset since');
  });

  it('a retry-after still running is exhausted', () => {
    const v = headroomView({ style: 'openai', retryAfterS: 20, seenAt: '2026-11-28T02:59:50.000Z' }, now)!;
    expect(v.level).toBe('exhausted');
    expect(v.lines).toEqual(['retry after 20 s (seen 02:59:50 UTC)']);
  });
});

describe('the session status bar item', () => {
  it('shows the most recent session and the newest headroom any session saw', () => {
    const s = sessionStatus(
      [
        session('newest', { rateLimit: openai({ seenAt: '2026-11-28T02:58:00.000Z' }) }),
        session('older', {
          rateLimit: openai({
            requests: { limit: 500, remaining: 10, reset: later },
            seenAt: '2026-11-28T02:59:00.000Z',
          }),
        }),
      ],
      now,
    )!;
    expect(s.sessionId).toBe('newest');
    expect(s.text).toBe('$(graph) $0.0412 est. · 83 % cached · $(warning) 10/500 req');
    expect(s.level).toBe('warning');
    expect(s.nextReset).toBe(Date.parse(later));
    expect(Object.fromEntries(s.details)['Rate limits (running low)']).toContain('10 of 500 requests left');
  });

  it('no price: says so and how to add one', () => {
    const s = sessionStatus(
      [session('a', { cost: null, costNote: 'Add it to loopgate.json', cacheHitRatio: null })],
      now,
    )!;
    expect(s.text).toBe('$(graph) no price');
    expect(Object.fromEntries(s.details).Cost).toBe('no price: Add it to loopgate.json');
    expect(Object.fromEntries(s.details)['Rate limits']).toBe('no rate-limit headers seen yet');
  });

  it('no session yet: nothing to show', () => {
    expect(sessionStatus([], now)).toBeUndefined();
  });
  // Under the cap, at 80 % or more, and past it: the status bar text (or none), its level, the detail line.
  it.each([
    {
      budget: { cap: { usd: 2 }, spent: { usd: 1, tokens: 10 }, state: 'ok' },
      text: undefined,
      level: 'ok',
      detail: '$1.00 of $2.00, 50 %',
    },
    {
      budget: { cap: { usd: 2 }, spent: { usd: 1.68, tokens: 10 }, state: 'warning' },
      text: '$(warning) budget 84 %',
      level: 'warning',
      detail: '$1.68 of $2.00, 84 % (80 % or more)',
    },
    {
      budget: { cap: { tokens: 1000 }, spent: { usd: 0, tokens: 1200 }, state: 'over' },
      text: '$(error) budget reached',
      level: 'exhausted',
      detail: '1,200 tokens of 1,000 tokens, 120 % (reached: nothing more is sent)',
    },
  ] as const)("a session's budget cap, state $budget.state: $level", ({ budget, text, level, detail }) => {
    const status = sessionStatus([session('a', { budget })], now)!;
    if (text) expect(status.text).toContain(text);
    else expect(status.text).not.toContain('budget');
    expect(status.level).toBe(level);
    expect(Object.fromEntries(status.details).Budget).toBe(detail);
  });
  it('a session without a cap says nothing of one', () => {
    expect(sessionStatus([session('a')], now)!.details.map(([k]) => k)).not.toContain('Budget');
  });
});
