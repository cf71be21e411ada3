// Issue 32: a key is shown in five forms (the redaction tag, the same-length
// mask, `sk-pr…wxyz`, the language server's `sk-…`, the fingerprint), and
// rules/redaction/key-display.ts is the one place that decides each. The expected
// strings below were taken from the code before the move: the forms are
// byte-identical. The source scan fails if a module builds a form by hand again.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SOURCE_FOLDERS } from '../source-folders.js';
import {
  hashTag,
  keyFingerprint,
  keyPrefixOnly,
  REDACTION_MARK,
  REDACTION_TAG,
  redactionTag,
  sameLengthMask,
  shortKey,
} from '../../rules/redaction/key-display.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import { withoutKeys } from '../../rules/project/config-lint/key-rules.js';
import { createTeamMask } from '../../rules/redaction/team-mask.js';
import { fingerprint as simulatorFingerprint } from '../../simulator/index.js';
import { KeyRing } from '../../proxy/pipeline/keyring.js';

const KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789wxyz';
const HASH_KEY = Buffer.alloc(32, 7);

describe('each form of a key', () => {
  it('redaction tag: [REDACTED:] + 4 hex of a keyed hash, as the redactor writes it', () => {
    expect(redactionTag(KEY, HASH_KEY)).toBe('[REDACTED:3696]');
    expect(redactionTag(KEY, HASH_KEY)).toMatch(REDACTION_TAG);
    expect(redactionTag(KEY, HASH_KEY).startsWith(REDACTION_MARK)).toBe(true);
    expect(redactionTag(KEY, Buffer.alloc(32, 8))).not.toBe('[REDACTED:3696]');
    const r = createRedactor({ secrets: [KEY], hashKey: HASH_KEY });
    expect(r.string(`key ${KEY} end`)).toBe('key [REDACTED:3696] end');
    expect(r.string('a?api_key=hunter2hunter2&x=1')).toBe('a?api_key=[REDACTED:e4b8]&x=1');
    // A tag already in a header value is kept, not tagged again.
    expect(r.headers({ authorization: 'Bearer [REDACTED:abcd]' }).authorization).toBe('[REDACTED:abcd]');
  });

  it('team masks share the keyed-hash tag with another kind', () => {
    expect(hashTag('ORG', 'org-abcdef123', HASH_KEY)).toBe('[ORG:86f7]');
    const team = createTeamMask({ hashKey: HASH_KEY });
    expect(team.string('org-abcdef123 proj_abcdef1234')).toBe('[ORG:86f7] [PROJECT:1865]');
    expect(team.headers({ 'openai-project': 'p1', 'openai-organization': '[REDACTED:abcd]' })).toEqual({
      'openai-project': '[MASKED:dccb]',
      'openai-organization': '[REDACTED:abcd]',
    });
  });

  it('same-length mask: the tag padded with *, or only * when the tag is longer', () => {
    expect(sameLengthMask('[REDACTED:3696]', 20).toString('latin1')).toBe('[REDACTED:3696]*****');
    expect(sameLengthMask('[REDACTED:3696]', 15).toString('latin1')).toBe('[REDACTED:3696]');
    expect(sameLengthMask('[REDACTED:3696]', 10).toString('latin1')).toBe('**********');
    const r = createRedactor({ secrets: [KEY], hashKey: HASH_KEY });
    expect(r.knownSecretsIn(Buffer.from(`"${KEY}"`)).toString('latin1')).toBe(`"[REDACTED:3696]${'*'.repeat(33)}"`);
    const short = createRedactor({ secrets: ['abcdefghij'], hashKey: HASH_KEY });
    expect(short.knownSecretsIn(Buffer.from('[abcdefghij]')).toString('latin1')).toBe('[**********]');
  });

  it('short form: first 5 … last 4, trimmed; … alone for 12 characters or fewer', () => {
    expect(shortKey(KEY)).toBe('sk-pr…wxyz');
    expect(shortKey(`  ${KEY} `)).toBe('sk-pr…wxyz');
    expect(shortKey('short-key-12')).toBe('…');
    expect(shortKey('sk-ant-api03-1234567890abcd')).toBe('sk-an…abcd');
  });

  it("language server's form: the provider prefix and …", () => {
    expect(keyPrefixOnly(KEY)).toBe('sk-proj-…');
    expect(keyPrefixOnly(`sk-ant-api03-${'A'.repeat(40)}`)).toBe('sk-ant-…');
    const d = withoutKeys({
      code: 'x',
      severity: 'warning',
      message: `found ${KEY} and sk-ant-api03-${'A'.repeat(40)}`,
      start: 0,
      end: 1,
      fixes: [],
      commands: [],
    } as never);
    expect(d.message).toBe('found sk-proj-… and sk-ant-…');
  });

  it('fingerprint: 12 hex of sha256, the same in the proxy and the simulator', () => {
    expect(keyFingerprint(KEY)).toBe('9e2550673ce7');
    expect(simulatorFingerprint(KEY)).toBe('9e2550673ce7');
    const ring = new KeyRing({ upstream: {} as never, path: '/v1/models' }, [{ name: 'main', key: KEY, named: true }]);
    expect(ring.slots[0]!.fingerprint).toBe('9e2550673ce7');
  });
});

describe('no other module builds a form of a key by hand', () => {
  const root = join(__dirname, '..', '..');
  const files = SOURCE_FOLDERS.flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(dir, f).split('\\').join('/')),
  ).filter((f) => f !== 'rules/redaction/key-display.ts');
  // Code lines only: comments may show a form to the reader.
  const code = (f: string): string[] =>
    readFileSync(join(root, f), 'utf8')
      .split('\n')
      .filter((l) => !/^\s*(\/\/|\/\*|\*)/.test(l));
  const HAND_MADE: Array<[string, RegExp]> = [
    ['the redaction mark', /\[REDACTED:/],
    ['a keyed-hash tag', /createHmac\([^)]*\)\.update\([^)]*\)\.digest\('hex'\)\.slice\(0, ?4\)/],
    ['a same-length mask', /'\*'\.repeat\(/],
    ['the short form', /\.slice\(0, ?\d+\)\}?\s*\+?\s*['`]?…['`]?\s*\+?\s*\$?\{?[\w.]*\.slice\(-\d+\)/],
    ["the language server's form", /\.prefix\b[^;\n]*['`]…/],
    ['a fingerprint', /createHash\('sha256'\)\.update\([^)]*\)\.digest\('hex'\)\.slice\(0, ?12\)/],
  ];

  it.each(HAND_MADE)('%s is built only in rules/redaction/key-display.ts', (_name, re) => {
    const hits = files.flatMap((f) => code(f).flatMap((l, i) => (re.test(l) ? [`${f}:${i + 1}: ${l.trim()}`] : [])));
    expect(hits).toEqual([]);
  });

  it('the scan sees each form in key-display.ts itself (a pattern that matches nothing guards nothing)', () => {
    const own = readFileSync(join(root, 'rules/redaction/key-display.ts'), 'utf8').split('\n');
    for (const [name, re] of HAND_MADE.filter(([n]) => n !== 'the redaction mark')) {
      expect(
        own.some((l) => re.test(l)),
        name,
      ).toBe(true);
    }
    expect(own.some((l) => /\[REDACTED:/.test(l) && !/^\s*(\/\/|\*)/.test(l))).toBe(true);
  });
});
