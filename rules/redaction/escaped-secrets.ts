// Known secrets spelt with escapes that a reader decodes: JSON `\uXXXX` (hex in any case, any mix of escaped and
// plain characters) and `\/`, and URL %XX (upper- or lower-case hex, any character, UTF-8 sequences included).
// The redactor's exact forms are the encodings as libraries write them (JSON.stringify, encodeURIComponent's
// upper-case hex); an upstream or a client may escape any character in any case, and `show`, the detail panel and
// a HAR's queryString decode what they print. So the text is read as a decoder would read it, and a secret found
// there is masked where it stands in the text. Pure: no I/O.

export interface EscapedSecretMatch {
  /** Range in the text as given (escapes included). */
  start: number;
  end: number;
  secret: string;
}

export interface EscapedSecretFinder {
  /** Where a registered secret is spelt with at least one escape, left to right, never overlapping. */
  find(s: string): EscapedSecretMatch[];
}

/**
 * Most text units an escaped spelling of one unit takes: `\uXXXX`, or a 4-byte %XX sequence for a surrogate pair
 * (12 for 2). A secret of L units spelt with escapes spans at most 6·L characters of the text.
 */
const MAX_CHARS_PER_UNIT = 6;

/**
 * Characters that can stand inside an escape token (`\`, `%`, `u`, `/`, hex digits): any other character is a token
 * of its own, so a scan may start there and read the text's tokens as a scan from the start would.
 */
function insideEscape(c: number): boolean {
  return (
    c === 92 ||
    c === 37 ||
    c === 117 ||
    c === 47 ||
    (c >= 48 && c <= 57) ||
    (c >= 65 && c <= 70) ||
    (c >= 97 && c <= 102)
  );
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function hexAt(s: string, at: number, digits: number): number {
  if (at + digits > s.length) return -1;
  let v = 0;
  for (let i = 0; i < digits; i++) {
    const h = hexValue(s.charCodeAt(at + i));
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

// The token read last (scratch, so reading a long body allocates nothing per character).
let unitCount = 0;
const tokenUnits = [0, 0];
let tokenEscaped = false;

/** Reads one token at `at` into the scratch above (its UTF-16 units, whether it was an escape); returns its length. */
function readToken(s: string, at: number): number {
  const c = s.charCodeAt(at);
  tokenEscaped = true;
  unitCount = 1;
  if (c === 92 /* \ */) {
    if (s.charCodeAt(at + 1) === 117 /* u */) {
      const v = hexAt(s, at + 2, 4);
      if (v >= 0) {
        tokenUnits[0] = v;
        return 6;
      }
    } else if (s.charCodeAt(at + 1) === 47 /* / */) {
      tokenUnits[0] = 47;
      return 2;
    }
  } else if (c === 37 /* % */) {
    const lead = hexAt(s, at + 1, 2);
    if (lead >= 0 && lead < 0x80) {
      tokenUnits[0] = lead;
      return 3;
    }
    const more =
      lead >= 0xf0 && lead <= 0xf4 ? 3 : lead >= 0xe0 && lead < 0xf0 ? 2 : lead >= 0xc2 && lead < 0xe0 ? 1 : 0;
    if (more > 0) {
      let cp = lead & (0x3f >> more);
      let ok = true;
      for (let k = 1; k <= more && ok; k++) {
        const b = s.charCodeAt(at + 3 * k) === 37 ? hexAt(s, at + 3 * k + 1, 2) : -1;
        if (b < 0x80 || b > 0xbf) ok = false;
        else cp = (cp << 6) | (b & 0x3f);
      }
      if (ok && cp <= 0x10ffff) {
        if (cp >= 0x10000) {
          tokenUnits[0] = 0xd800 + ((cp - 0x10000) >> 10);
          tokenUnits[1] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
          unitCount = 2;
        } else tokenUnits[0] = cp;
        return 3 * (more + 1);
      }
    }
  }
  tokenEscaped = false;
  tokenUnits[0] = c;
  return 1;
}

export function escapedSecretFinder(secrets: readonly string[]): EscapedSecretFinder {
  // Longest first: at one position the longer secret wins.
  const list = [...new Set(secrets)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  const shortest = list.length ? list[list.length - 1]!.length : Infinity;
  // A secret is found within a run of units that all occur in some secret; anything else ends the run.
  const units = new Uint8Array(65536);
  for (const s of list) for (let i = 0; i < s.length; i++) units[s.charCodeAt(i)] = 1;

  const longest = list.length ? list[0]!.length : 0;
  const reach = MAX_CHARS_PER_UNIT * longest;
  /** Whether the escape at `at` (if one starts there) decodes to units some secret holds: only those can be in a match. */
  const couldComplete = (s: string, at: number): boolean => {
    readToken(s, at);
    return tokenEscaped && units[tokenUnits[0]!] === 1 && (unitCount === 1 || units[tokenUnits[1]!] === 1);
  };

  /**
   * Only the text around escapes is read: an escaped spelling holds an escape of a unit some secret holds, and
   * lies within `reach` of it. Escapes are found with indexOf (no work per character of the whole text); the
   * windows around those that could complete a secret are merged and each read token by token, as the whole
   * text would be (a window starts on a character that cannot be inside an escape).
   */
  function find(s: string): EscapedSecretMatch[] {
    const out: EscapedSecretMatch[] = [];
    if (!list.length || typeof s !== 'string' || s.length < shortest) return out;
    let scanned = 0;
    let nextU = s.indexOf('\\u');
    let nextSlash = s.indexOf('\\/');
    let nextPercent = s.indexOf('%');
    while (nextU >= 0 || nextSlash >= 0 || nextPercent >= 0) {
      let at = Infinity;
      if (nextU >= 0) at = nextU;
      if (nextSlash >= 0 && nextSlash < at) at = nextSlash;
      if (nextPercent >= 0 && nextPercent < at) at = nextPercent;
      if (at === nextU) nextU = s.indexOf('\\u', at + 2);
      if (at === nextSlash) nextSlash = s.indexOf('\\/', at + 2);
      if (at === nextPercent) nextPercent = s.indexOf('%', at + 1);
      if (at < scanned || !couldComplete(s, at)) continue;
      let start = Math.max(scanned, at - reach);
      while (start > scanned && insideEscape(s.charCodeAt(start))) start--;
      scanned = scanWindow(s, start, at + reach, out);
    }
    return out;
  }

  /**
   * Reads tokens from `from` until past `to`, onwards while escapes that could complete a secret keep coming
   * within reach, and to the end of the run of secret units it is in (a match never straddles where it stops);
   * adds the escaped spellings found; returns where it stopped.
   */
  function scanWindow(s: string, from: number, to: number, out: EscapedSecretMatch[]): number {
    let text = '';
    let starts: number[] = [];
    let ends: number[] = [];
    let escaped = false;
    const flush = () => {
      if (escaped && text.length >= shortest) {
        let covered = -1;
        const found: EscapedSecretMatch[] = [];
        for (const secret of list) {
          for (let i = text.indexOf(secret); i >= 0; i = text.indexOf(secret, i + 1)) {
            found.push({ start: starts[i]!, end: ends[i + secret.length - 1]!, secret });
          }
        }
        found.sort((a, b) => a.start - b.start || b.end - a.end);
        for (const m of found) {
          if (m.start < covered) continue;
          // Spelt plainly it is the exact forms' to mask (they ran first); here only escaped spellings.
          if (m.end - m.start === m.secret.length && s.slice(m.start, m.end) === m.secret) continue;
          out.push(m);
          covered = m.end;
        }
      }
      text = '';
      starts = [];
      ends = [];
      escaped = false;
    };
    let at = from;
    let end = to;
    while (at < s.length && (at < end || text.length)) {
      const length = readToken(s, at);
      if (units[tokenUnits[0]!] === 1 && (unitCount === 1 || units[tokenUnits[1]!] === 1)) {
        for (let k = 0; k < unitCount; k++) {
          text += String.fromCharCode(tokenUnits[k]!);
          starts.push(at);
          ends.push(at + length);
        }
        if (tokenEscaped) {
          escaped = true;
          // A match holding this escape may end up to `reach` past it.
          end = Math.max(end, at + reach);
        }
      } else if (text.length) flush();
      at += length;
    }
    flush();
    return at;
  }

  return { find };
}

/** The secret with every character as a JSON `\u` escape, in lower-case hex (a form tests sweep sinks for). */
export function unicodeEscaped(secret: string): string {
  let out = '';
  for (let i = 0; i < secret.length; i++) out += `\\u${secret.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/** encodeURIComponent with lower-case hex, as some clients write it. */
export function lowerCasePercentEncoded(secret: string): string {
  return encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
}
