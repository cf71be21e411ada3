import { describe, expect, it } from 'vitest';
import { checkApiKey } from '../../rules/redaction/api-key.js';

describe('checkApiKey', () => {
  it('trims surrounding whitespace and accepts ordinary keys', () => {
    expect(checkApiKey('  sk-abc123_DEF-456\n')).toEqual({ key: 'sk-abc123_DEF-456' });
    expect(checkApiKey('sk-ant-api03-abc')).toEqual({ key: 'sk-ant-api03-abc' });
  });

  it.each([
    ['', /empty/],
    ['Bearer sk-abc', /starts with "Bearer "/],
    ['bearer\tsk-abc', /starts with "Bearer "/],
    ['"sk-abc"', /wrapped in quotes/],
    ['sk-abc\ndef', /line break/],
    ['sk-abc def', /space/],
    ['sk-abc\u0000', /control character/],
    ['sk-abc\u201d', /cannot be sent in an HTTP header/],
  ])('%j is refused with what to fix', (raw, problem) => {
    const r = checkApiKey(raw);
    expect('problem' in r && r.problem).toMatch(problem);
    // The message never quotes the key.
    if ('problem' in r && raw.length > 4) expect(r.problem).not.toContain(raw.trim());
  });
});
