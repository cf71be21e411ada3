// The one quoting function for a word Loopgate puts into a command for the
// user to type or paste (the alias advice, the CLI's own path, `show --curl`):
// bare when it is plain, POSIX single quotes otherwise (everything literal;
// PowerShell reads them too), and bash/zsh's $'…' with the characters escaped
// when it holds a control character, so pasting it runs the same bytes and no
// such character reaches the terminal raw. Pure.

const PLAIN = /^[\w@%+=:,./-]+$/;
const CONTROL = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** `windows`: cmd.exe's double quotes, for a path (the install command on Windows). */
export function shellQuote(word: string, shell: 'posix' | 'windows' = 'posix'): string {
  if (shell === 'windows') return /^[\w@%+=:,./\\-]+$/.test(word) ? word : `"${word}"`;
  if (PLAIN.test(word)) return word;
  if (!CONTROL.test(word)) return `'${word.replace(/'/g, `'\\''`)}'`;
  const body = word
    .replace(/[\\']/g, (c) => `\\${c}`)
    .replace(new RegExp(CONTROL.source, 'g'), (c) => {
      const code = c.charCodeAt(0);
      return code <= 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
    });
  return `$'${body}'`;
}

/** Several words, each quoted as it needs. */
export function shellWords(words: readonly string[]): string {
  return words.map((w) => shellQuote(w)).join(' ');
}
