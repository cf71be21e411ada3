// The one quoting function for commands Loopgate suggests: pasted into bash,
// every word comes back byte for byte, and no control character is printed raw.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellQuote, shellWords } from '../../rules/terminal/shell-quote.js';

const WORDS = [
  'gpt-4o-mini',
  'a b',
  "it's",
  '$(touch pwned)',
  '`id`',
  'x;y|z&',
  'back\\slash',
  'é漢🙂',
  'esc\x1b]52;c;SGVsbG8=\x07',
  'c1\u009b31m',
  'rlo\u202e',
  "both'\x1b",
  '',
  'line\nbreak',
];

describe('shellQuote', () => {
  it('leaves plain words bare and quotes the rest so bash reads them back unchanged', () => {
    expect(shellQuote('gpt-6.2-sol=gpt-6.1-sol')).toBe('gpt-6.2-sol=gpt-6.1-sol');
    const line = shellWords(WORDS.filter((w) => w !== ''));
    expect(line).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202a-\u202e]/);
    const echoed = execFileSync('bash', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' });
    expect(echoed.split('\0').slice(0, -1)).toEqual(WORDS.filter((w) => w !== ''));
    expect(shellQuote('')).toBe("''");
  });

  it("quotes a Windows path in cmd.exe's double quotes only when it must", () => {
    expect(shellQuote('C:\\loopgate\\dist\\cli.js', 'windows')).toBe('C:\\loopgate\\dist\\cli.js');
    expect(shellQuote('C:\\Program Files\\loopgate', 'windows')).toBe('"C:\\Program Files\\loopgate"');
  });
});
