// Demo mode's family matcher (rules/keys/demo-family.ts): which demo model
// a newer (or unknown) model of a listed family is served as, and that an
// unrelated name never matches.
import { describe, expect, it } from 'vitest';
import { closestDemoModel, compareVersions, familyOf } from '../../rules/keys/demo-family.js';
import { defaultFixture } from '../../simulator/index.js';

const DEMO = [
  ...new Set(
    Object.values(defaultFixture.groups).flatMap((g) => g.models.map((m) => (typeof m === 'string' ? m : m.id))),
  ),
];

describe('familyOf', () => {
  it('splits a name from its version numbers', () => {
    expect(familyOf('gpt-6.2-sol')).toEqual({ family: 'gpt-sol', version: [6, 2] });
    expect(familyOf('claude-opus-5-5')).toEqual({ family: 'claude-opus', version: [5, 5] });
    expect(familyOf('Claude-Opus-5')).toEqual({ family: 'claude-opus', version: [5] });
    expect(familyOf('qwen3.7-max')).toEqual({ family: 'qwen3-max', version: [7] });
  });

  it('a snapshot date is not a version', () => {
    expect(familyOf('claude-opus-5-6-20261201')).toEqual({ family: 'claude-opus', version: [5, 6] });
    expect(familyOf('gpt-6.2-sol-2026-10-01')).toEqual({ family: 'gpt-sol', version: [6, 2] });
  });

  it('IDs with no version of their own, or no name, have no family', () => {
    for (const id of [
      'deepseek-chat',
      'gpt-4o-mini',
      'o4-mini',
      'coder-model',
      '4',
      '2026-10-01',
      '',
      'gpt--6',
      'gpt 6.2 sol',
      'gpt-6.2-sol\n',
      'x'.repeat(201),
    ]) {
      expect(familyOf(id), id).toBeUndefined();
    }
  });
});

describe('compareVersions', () => {
  it('orders part by part; a missing part is 0', () => {
    expect(compareVersions([6, 2], [6, 1])).toBeGreaterThan(0);
    expect(compareVersions([5], [5, 0])).toBe(0);
    expect(compareVersions([4, 10], [4, 9])).toBeGreaterThan(0);
    expect(compareVersions([4, 7], [5, 5])).toBeLessThan(0);
  });
});

describe('closestDemoModel', () => {
  it('a newer release of a demo family is served as the newest demo model of it', () => {
    expect(closestDemoModel('gpt-6.2-sol', DEMO)).toBe('gpt-6.1-sol');
    expect(closestDemoModel('gpt-7-sol', DEMO)).toBe('gpt-6.1-sol');
    expect(closestDemoModel('claude-opus-5-6', DEMO)).toBe('claude-opus-5-5');
    expect(closestDemoModel('claude-sonnet-6', DEMO)).toBe('claude-sonnet-5-5');
    expect(closestDemoModel('claude-haiku-5-5-20261201', DEMO)).toBe('claude-haiku-5-5');
    expect(closestDemoModel('qwen3.8-max', DEMO)).toBe('qwen3.7-max');
    // A bare `gpt-N.N` is the family of gpt-4.1, not of gpt-6.1-sol (the name differs).
    expect(closestDemoModel('gpt-6.2', DEMO)).toBe('gpt-4.1');
  });

  it('between two demo models, the older one: a model is never served as a newer one while an older exists', () => {
    expect(closestDemoModel('claude-opus-4-7', DEMO)).toBe('claude-opus-4-1');
    expect(closestDemoModel('claude-opus-5-0', DEMO)).toBe('claude-opus-4-1');
    expect(closestDemoModel('claude-sonnet-5', DEMO)).toBe('claude-sonnet-4-6');
  });

  it('older than every demo model of its family: the oldest of them (nothing else serves it)', () => {
    expect(closestDemoModel('claude-opus-3', DEMO)).toBe('claude-opus-4-1');
    expect(closestDemoModel('gpt-5.9-sol', DEMO)).toBe('gpt-6.1-sol');
  });

  it('an unrelated name never matches', () => {
    for (const id of [
      'gpt-6.2-luna',
      'gpt-6.2-sol-mini',
      'claude-6',
      'claude-opus',
      'gemini-3.1-pro',
      'o5-mini',
      'gpt-5o-mini',
      'deepseek-chat-2',
      'llama-3.1-8b',
      'sol-6.2',
    ]) {
      expect(closestDemoModel(id, DEMO), id).toBeUndefined();
    }
  });

  it('a listed model is served as itself (no fallback)', () => {
    expect(closestDemoModel('gpt-6.1-sol', DEMO)).toBeUndefined();
    expect(closestDemoModel('claude-opus-4-1', DEMO)).toBeUndefined();
  });

  it('one version listed twice goes to the shorter ID, whatever the order', () => {
    expect(closestDemoModel('x-2', ['x-1-20250101', 'x-1'])).toBe('x-1');
    expect(closestDemoModel('x-2', ['x-1', 'x-1-20250101'])).toBe('x-1');
  });

  it('nothing listed: nothing served', () => {
    expect(closestDemoModel('gpt-6.2-sol', [])).toBeUndefined();
  });
});
