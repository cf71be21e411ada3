// Blanks out comments (and Python docstrings) so that prose never triggers a
// rule. The result has the same length and line breaks as the input, so every
// offset found in it is an offset in the original text.
import type { FileKind } from './types.js';

interface Syntax {
  /** `//` and `/* *\/` comments. */
  slashComments: boolean;
  /** `#` comments; `hashNeedsSpace`: only at line start or after whitespace. */
  hashComments: boolean;
  hashNeedsSpace: boolean;
  quotes: string;
  /** Strings (except JS template literals) end at a line break, so a stray quote cannot swallow the file. */
  singleLineStrings: boolean;
  /** Python triple-quoted strings are documentation: blank them too. */
  tripleQuotedAreProse: boolean;
}

const SYNTAX: Record<FileKind, Syntax> = {
  js: {
    slashComments: true,
    hashComments: false,
    hashNeedsSpace: false,
    quotes: '"\'`',
    singleLineStrings: true,
    tripleQuotedAreProse: false,
  },
  json: {
    slashComments: true,
    hashComments: false,
    hashNeedsSpace: false,
    quotes: '"',
    singleLineStrings: true,
    tripleQuotedAreProse: false,
  },
  python: {
    slashComments: false,
    hashComments: true,
    hashNeedsSpace: false,
    quotes: '"\'',
    singleLineStrings: true,
    tripleQuotedAreProse: true,
  },
  yaml: {
    slashComments: false,
    hashComments: true,
    hashNeedsSpace: true,
    quotes: '"\'',
    singleLineStrings: true,
    tripleQuotedAreProse: false,
  },
  toml: {
    slashComments: false,
    hashComments: true,
    hashNeedsSpace: false,
    quotes: '"\'',
    singleLineStrings: true,
    tripleQuotedAreProse: false,
  },
  dotenv: {
    slashComments: false,
    hashComments: true,
    hashNeedsSpace: true,
    quotes: '"\'',
    singleLineStrings: true,
    tripleQuotedAreProse: false,
  },
};

function interesting(s: Syntax): RegExp {
  const chars = s.quotes + (s.slashComments ? '/' : '') + (s.hashComments ? '#' : '');
  return new RegExp(`[${chars.replace(/[\\\]^-]/g, '\\$&')}]`, 'g');
}

export function maskComments(text: string, kind: FileKind): string {
  const s = SYNTAX[kind];
  const next = interesting(s);
  const blanks: Array<[number, number]> = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    // Jump straight to the next quote or comment start: most text is neither.
    next.lastIndex = i;
    const m = next.exec(text);
    if (!m) break;
    i = m.index;
    const c = text[i]!;
    if (s.tripleQuotedAreProse && (text.startsWith('"""', i) || text.startsWith("'''", i))) {
      const close = text.indexOf(text.slice(i, i + 3), i + 3);
      const end = close < 0 ? n : close + 3;
      blanks.push([i, end]);
      i = end;
      continue;
    }
    if (s.quotes.includes(c)) {
      let j = i + 1;
      while (j < n && text[j] !== c) {
        if (text[j] === '\\') j++;
        else if (s.singleLineStrings && c !== '`' && text[j] === '\n') break;
        j++;
      }
      i = j + 1;
      continue;
    }
    if (c === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) {
      const close = text[i + 1] === '/' ? text.indexOf('\n', i) : text.indexOf('*/', i + 2);
      const end = close < 0 ? n : text[i + 1] === '/' ? close : close + 2;
      blanks.push([i, end]);
      i = end;
      continue;
    }
    if (c === '#' && (!s.hashNeedsSpace || i === 0 || /\s/.test(text[i - 1]!))) {
      const nl = text.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      blanks.push([i, end]);
      i = end;
      continue;
    }
    i++;
  }
  if (blanks.length === 0) return text;
  let out = '';
  let at = 0;
  for (const [from, to] of blanks) {
    out += text.slice(at, from) + text.slice(from, to).replace(/[^\r\n]/g, ' ');
    at = to;
  }
  return out + text.slice(at);
}
