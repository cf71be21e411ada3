// Issue 39 H-7: the editor's cost text when a session's estimate is no figure.
// A proxy before the fix sent `"estimated": null` where a huge price made
// Infinity (JSON has no Infinity); a foreign or hand-made answer can send
// anything. The status bar, its tooltip and the session panel say "no price"
// with the reason, and never throw, show $0, NaN or Infinity.
import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../core/agent-session.js';
import { sessionCostText } from '../../extension/sessions/session-format.js';
import { formatUsd } from '../../rules/sessions/usd.js';
import { sessionStatus } from '../../extension/sessions/session-status.js';
import { sessionContent } from '../../extension/sessions/session-html.js';
import { bareSession } from '../kit/sessions.js';

const REASON = 'The estimate for "house-model" came to more than a number can hold';

function session(estimated: unknown): SessionSummary {
  return bareSession({
    id: 'codex:s1',
    client: 'codex',
    models: ['house-model'],
    keys: ['default'],
    routes: ['/v1/chat/completions'],
    tokens: { input: 5, output: 5, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0, cacheWrite: 0 },
    cost: { estimated: estimated as number, currency: 'USD', unpriced: 0 },
    costNote: REASON,
  });
}

const NOT_FIGURES: unknown[] = [null, Infinity, -Infinity, NaN, -1, '1e9', { n: 1 }];

describe('cost text for an estimate that is no figure', () => {
  const label = (v: unknown) =>
    typeof v === 'string' ? `"${v}"` : v && typeof v === 'object' ? JSON.stringify(v) : String(v);
  it.each(NOT_FIGURES.map((v) => [label(v), v]))('%s: "no price", never a throw', (_, v) => {
    expect(formatUsd(v as number)).toBe('no price');
    expect(sessionCostText(session(v))).toBe('no price');
    const status = sessionStatus([session(v)])!;
    expect(status.text).toMatch(/^\$\(graph\) no price/);
    expect(Object.fromEntries(status.details).Cost).toBe(`no price: ${REASON}`);
    const panel = sessionContent({ session: session(v), turns: [], seqs: [] });
    expect(panel).toContain('no price');
    expect(panel).toContain(REASON.replace(/"/g, '&#34;'));
    expect(panel + status.text).not.toMatch(/NaN|Infinity|\$0(?![.\d])/);
  });

  it('a real figure is still shown as one', () => {
    expect(sessionCostText(session(0.0123))).toBe('$0.0123 estimated');
    expect(sessionStatus([session(0.0123)])!.text).toMatch(/^\$\(graph\) \$0\.0123 est\./);
  });
});
