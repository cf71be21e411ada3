// Several API keys in one setting: a key belongs to a group, and the group
// decides which models and protocols work, so real users hold several. The
// list arrives as LOOPGATE_API_KEY (commas or line breaks), one per line on
// --key-stdin, or from the editor's SecretStorage. Pure: no I/O.
//
// Decision: `name=key` names a key, and only what a user would write as a name
// counts as one: 1–32 of [A-Za-z0-9_.-] before the FIRST `=`, starting with a
// letter or digit, not `sk`/`sk-…` shaped, and followed by a plausible key (one
// that passes the shape check, at least MIN_SECRET_LENGTH long, not starting
// with `=`). Anything else is one key: `t6lhmCF9vOcZ5Ycn453bCg==` (base64 with
// `=` padding) must not become the name `t6lhmCF9vOcZ5Ycn453bCg` of a key `=`,
// which would print the key in a message and put a slice of it in headers and
// logs. A name candidate that was not taken is key material: never printed.
import { checkApiKey } from '../redaction/api-key.js';
import { shortKey } from '../redaction/key-display.js';
import type { NamedKey } from '../../core/options.js';
import { MIN_SECRET_LENGTH } from '../redaction/known-secrets.js';

export interface KeyList {
  keys: NamedKey[];
  /** One sentence per bad entry, naming it (masked) and what to do; the good keys are kept. */
  problems: string[];
}

/** What a key's name may be (the proxy's list, the editor's named keys): header-safe, short. */
export const KEY_NAME = /^[A-Za-z0-9][\w.-]{0,31}$/;
const NAME = KEY_NAME;

/** A name for showing: the user's, else `key-N` by position (1-based). */
export function positionName(index: number): string {
  return `key-${index + 1}`;
}

/**
 * Splits `name=key` when the part before the first `=` is a name and the rest a plausible key; else
 * the entry is one key. A name followed by something that cannot be a key (too short, a space, quotes)
 * is a problem, said without the name: it may be key material after all.
 */
export function splitName(entry: string): { name?: string; key: string; problem?: string } {
  const eq = entry.indexOf('=');
  if (eq <= 0) return { key: entry };
  const name = entry.slice(0, eq).trim();
  if (!NAME.test(name) || /^sk(-|$)/i.test(name)) return { key: entry };
  const rest = entry.slice(eq + 1).trim();
  // Nothing but `=` after it (`…Cg==`, `…Cg=`): base64 padding, the `=` belongs to the key.
  if (rest === '' || rest.startsWith('=')) return { key: entry };
  const checked = checkApiKey(rest);
  if ('problem' in checked) return { key: entry, problem: `after "=": ${checked.problem}` };
  if (rest.length < MIN_SECRET_LENGTH)
    return { key: entry, problem: `${rest.length} character(s) after "=", too short to be an API key` };
  return { name, key: rest };
}

/**
 * Reads a key list. Empty entries at the ends (a trailing newline or comma)
 * are ignored; one in the middle is reported. A key that fails its shape
 * check, or repeats an earlier key, is left out with a problem; a repeated
 * name is made unique (`name-2`) and reported.
 */
export function parseKeyList(raw: string, source: string): KeyList {
  // `a,\nb` (a comma at the end of a line) is one separator; `a,,b` and a blank line hold an empty entry.
  const entries = raw.split(/,[ \t]*(?:\r?\n)?|\r?\n/).map((e) => e.trim());
  // A trailing newline or comma is not an empty entry; one between keys is.
  while (entries.length && entries[entries.length - 1] === '') entries.pop();
  while (entries.length && entries[0] === '') entries.shift();
  return fromEntries(
    entries.map((e) => splitName(e)),
    source,
  );
}

/** The same checks for a list that arrives already split (the editor's named keys). */
export function fromEntries(entries: Array<{ name?: string; key: string; problem?: string }>, source: string): KeyList {
  const keys: NamedKey[] = [];
  const problems: string[] = [];
  const seenKeys = new Map<string, string>();
  const seenNames = new Set<string>();
  entries.forEach((given, i) => {
    if (given.problem) {
      // `name=` with no usable key after it: said by position alone (the name may be key material).
      problems.push(`${source}: key #${i + 1}: ${given.problem}. It is left out; the other keys work.`);
      return;
    }
    let entry = given;
    if (entry.name !== undefined && !NAME.test(entry.name)) {
      problems.push(
        `${source}: key #${i + 1} has a name that cannot be used (1–32 letters, digits, "_", "." or "-"); it is called "${positionName(i)}" here.`,
      );
      entry = { key: entry.key };
    }
    const label = entry.name ? `key "${entry.name}"` : `key #${i + 1}`;
    if (entry.key.trim() === '') {
      problems.push(`${source}: ${label} is empty; remove the extra separator or fill it in.`);
      return;
    }
    const checked = checkApiKey(entry.key);
    if ('problem' in checked) {
      problems.push(
        `${source}: ${label} (${shortKey(entry.key)}): ${checked.problem}. It is left out; the other keys work.`,
      );
      return;
    }
    if (checked.key.length < MIN_SECRET_LENGTH) {
      // Redaction does not register secrets this short (they would match ordinary text): such a key could leak.
      problems.push(
        `${source}: ${label} is ${checked.key.length} character(s) long, too short to be an API key (a stray line break?). It is left out.`,
      );
      return;
    }
    const earlier = seenKeys.get(checked.key);
    if (earlier !== undefined) {
      problems.push(
        `${source}: ${label} (${shortKey(checked.key)}) is the same key as ${earlier}; the copy is ignored.`,
      );
      return;
    }
    const wanted = entry.name ?? positionName(i);
    let name = wanted;
    for (let n = 2; seenNames.has(name); n++) name = `${wanted}-${n}`;
    if (name !== wanted && entry.name) {
      problems.push(
        `${source}: two keys are named "${wanted}"; the second (${shortKey(checked.key)}) is called "${name}" here. Give each key its own name.`,
      );
    }
    seenNames.add(name);
    seenKeys.set(checked.key, entry.name ? `key "${name}"` : `key #${i + 1}`);
    keys.push({ name, key: checked.key, named: entry.name !== undefined });
  });
  return { keys, problems };
}
