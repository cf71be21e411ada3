// The one session-summary builder for tests of what the editor shows about a session.
import type { SessionSummary } from '../../core/agent-session.js';

/** A Claude Code session by header, 5 minutes and 2 turns long, nothing spent; `over` sets the rest. */
export function bareSession(over: Partial<SessionSummary> = {}): SessionSummary {
  return {
    id: 'claude-code:s1',
    source: 'header',
    client: 'claude-code',
    agents: [],
    started: '2026-11-28T02:50:00.000Z',
    lastSeen: '2026-11-28T02:55:00.000Z',
    durationMs: 300_000,
    requests: 2,
    turns: 2,
    errors: 0,
    retries: 0,
    models: ['claude-sonnet-4-6'],
    keys: ['claude'],
    routes: ['/v1/messages'],
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0, cacheWrite: 0 },
    cost: { estimated: 0, currency: 'USD', unpriced: 0 },
    cacheHitRatio: 0,
    rateLimit: null,
    ...over,
  };
}
