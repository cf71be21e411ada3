// The editor's fault toggle, the pure part (extension/faults/fault-presets.ts):
// every offered fault is a rule the proxy's own parser takes, what the user
// types is checked before it is sent, and the status bar item says what is
// armed and hides when nothing is.
import { describe, expect, it } from 'vitest';
import {
  checkModelGlob,
  checkTimes,
  FAULT_PRESETS,
  faultRuleText,
  faultStatus,
  nextWindowEnd,
} from '../../extension/faults/fault-presets.js';
import type { ArmedFault } from '../../core/fault.js';
import { parseFaultRule } from '../../rules/faults/fault-rules.js';

function armed(id: number, text: string, over: Partial<ArmedFault> = {}): ArmedFault {
  const parsed = parseFaultRule(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return {
    id,
    text,
    rule: parsed.rule,
    source: 'editor',
    armedAt: '2026-11-28T06:00:00.000Z',
    matched: 0,
    injected: 0,
    remaining: 1,
    spent: false,
    ...over,
  };
}

describe('the offered faults', () => {
  it('are each a rule the proxy parses, the nine the issue names', () => {
    expect(FAULT_PRESETS.map((p) => p.rule)).toEqual([
      '429 retry-after=2',
      '529',
      '500',
      '503',
      'read-timeout',
      'cut events=3',
      'stall seconds=10',
      'error-event',
      'ws-close code=1011',
    ]);
    for (const p of FAULT_PRESETS) expect(parseFaultRule(p.rule).ok, p.rule).toBe(true);
  });

  it('add the model scope, and a typed rule that does not parse comes back with what to fix', () => {
    expect(faultRuleText('429 retry-after=2', ' claude-* ')).toEqual({ rule: '429 retry-after=2 model=claude-*' });
    expect(faultRuleText('500', '')).toEqual({ rule: '500' });
    const bad = faultRuleText('418');
    expect('problem' in bad && bad.problem).toMatch(/A fault starts with its kind, one of 429, 529/);
    const wrong = faultRuleText('500 retry-after=2');
    expect('problem' in wrong && wrong.problem).toBe('retry-after goes with 429, 529 or 503, not 500.');
    // A typed rule that scopes a model, and the model box too: the shared parser names the setting given twice.
    const twice = faultRuleText('429 model=gpt-*', 'claude-*');
    expect('problem' in twice && twice.problem).toMatch(
      /^model is given twice in one fault \("model=gpt-\*" and "model=claude-\*"\)/,
    );
  });

  it('check the count and the model glob as typed', () => {
    expect(checkTimes('1')).toBeUndefined();
    expect(checkTimes(' 25 ')).toBeUndefined();
    for (const bad of ['0', '-1', '1.5', 'two', '', '1000000']) expect(checkTimes(bad), bad).toMatch(/whole number/);
    expect(checkModelGlob('')).toBeUndefined();
    expect(checkModelGlob('claude-*')).toBeUndefined();
    expect(checkModelGlob('claude sonnet')).toMatch(/without spaces/);
  });
});

describe('the status bar item', () => {
  it('hides when no rule is armed, or every rule is spent', () => {
    expect(faultStatus([])).toBeUndefined();
    expect(faultStatus([armed(1, '429', { spent: true, remaining: 0 })])).toBeUndefined();
  });

  it('names the armed fault and how many requests it has left; the tooltip lists every rule', () => {
    const one = faultStatus([armed(3, '429 retry-after=2', { remaining: 1 })]);
    expect(one?.text).toBe('$(zap) fault: 429 ×1');
    expect(one?.tooltip).toContain('#3 429 retry-after=2: 1 more request (from the editor; injected 0 so far)');
    const many = faultStatus([
      armed(1, 'cut events=3', { remaining: 2, source: 'cli' }),
      armed(2, '500', { remaining: null, source: 'config' }),
      armed(3, '503', { remaining: 1 }),
      armed(4, '529', { spent: true }),
    ]);
    expect(many?.text).toBe('$(zap) faults: cut ×2, 500 every request, +1');
    expect(many?.tooltip.split('\n').filter((l) => l.startsWith('#'))).toEqual([
      '#1 cut events=3: 2 more requests (from --fault; injected 0 so far)',
      '#2 500: every matching request (from loopgate.json; injected 0 so far)',
      '#3 503: 1 more request (from the editor; injected 0 so far)',
    ]);
  });

  it('is read again when a rule’s time window ends (no request says so)', () => {
    expect(nextWindowEnd([armed(1, '429')])).toBeUndefined();
    expect(
      nextWindowEnd([armed(1, '429 for=30s'), armed(2, '500 for=10s'), armed(3, '503 for=5s', { spent: true })]),
    ).toBe(Date.parse('2026-11-28T06:00:10.000Z'));
  });
});
