// `loopgate run`'s per-run credential (rules/access/run-credential.ts): made from the
// local token, checked without state, never the token, and redacted like it.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  RUN_UNREGISTERED_MAX_AGE_MS,
  runCredential,
  runLifetime,
  runToolName,
  verifyRunCredential,
} from '../../rules/access/run-credential.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import { secretForms } from '../../rules/redaction/known-secrets.js';

const TOKEN = 'lg-local-test-token-0123456789abcdefghijklmnop';
const facts = { tool: 'claude', started: Date.parse('2026-11-28T03:00:00Z'), nonce: 'k3x9q1' };

describe('run credential', () => {
  it('verifies what this token made, back to the run facts, and nothing else', () => {
    const c = runCredential(TOKEN, facts);
    expect(c).not.toContain(TOKEN);
    expect(verifyRunCredential(TOKEN, c)).toEqual(facts);
    expect(verifyRunCredential('lg-local-other-token-0123456789abcdefghijk', c)).toBeUndefined();
    expect(verifyRunCredential(TOKEN, c.replace('_claude_', '_codex_'))).toBeUndefined();
    expect(verifyRunCredential(TOKEN, TOKEN)).toBeUndefined();
    expect(verifyRunCredential(TOKEN, undefined)).toBeUndefined();
    // A --no-token proxy checks nothing: the shape alone names the run.
    expect(verifyRunCredential(null, c)).toEqual(facts);
  });

  it('never verifies a changed credential (property)', () => {
    const c = runCredential(TOKEN, facts);
    fc.assert(
      fc.property(fc.nat(c.length - 1), fc.constantFrom(...'abcdef0123456789_-xz'), (at, ch) => {
        const changed = c.slice(0, at) + ch + c.slice(at + 1);
        fc.pre(changed !== c);
        const v = verifyRunCredential(TOKEN, changed);
        expect(v).toBeUndefined();
      }),
    );
  });

  it('names the tool as a credential can carry it', () => {
    expect(runToolName('/usr/local/bin/Claude')).toBe('claude');
    expect(runToolName('C:\\tools\\codex.exe')).toBe('codex');
    expect(runToolName('my agent!.mjs')).toBe('my-agent');
    expect(runToolName('!!!')).toBe('tool');
    expect(runToolName('x'.repeat(50))).toHaveLength(32);
  });

  it('is redacted wherever it appears, as the token is (canary)', () => {
    const c = runCredential(TOKEN, facts);
    const r = createRedactor({ secrets: [TOKEN] });
    const text = `Authorization: Bearer ${c}\n{"api_key":"${c}"} ${encodeURIComponent(c)}`;
    expect(r.string(text)).not.toContain(c.slice(-32));
    expect(r.headers({ authorization: `Bearer ${c}`, 'x-api-key': c })).not.toMatchObject({ 'x-api-key': c });
    expect(JSON.stringify(r.headers({ authorization: `Bearer ${c}`, 'x-api-key': c }))).not.toContain(c.slice(-32));
  });

  it('masks another run’s credential (one the redactor never saw) in every form the token is searched in', () => {
    const other = runCredential('lg-local-some-other-token-00000000000000', { ...facts, started: Date.now() });
    const r = createRedactor({ secrets: [TOKEN] });
    const forms = [...secretForms(other), `\\n${other}`, `\\t${other}`, `%20${other}`, `x${other}`];
    expect(forms.length).toBeGreaterThan(10);
    for (const form of forms) {
      const out = r.string(`{"text":"before ${form} after"}`);
      expect(out, form).not.toContain(form);
      // No 24 characters of any form survive.
      for (let i = 0; i + 24 <= form.length; i += 8) expect(out, form).not.toContain(form.slice(i, i + 24));
    }
  });

  it('lives while its run lives: never from the future, never after its run ended, a day when unregistered', () => {
    const now = Date.now();
    const at = (started: number) => ({ ...facts, started });
    expect(runLifetime(at(now - 1000), 'unknown', now)).toEqual({ ok: true });
    expect(runLifetime(at(now - 3 * RUN_UNREGISTERED_MAX_AGE_MS), 'live', now)).toEqual({ ok: true });
    expect(runLifetime(at(now - 1000), 'ended', now)).toMatchObject({ ok: false, code: 'run-credential-ended' });
    expect(runLifetime(at(0), 'unknown', now)).toMatchObject({ ok: false, code: 'run-credential-expired' });
    expect(runLifetime(at(Date.parse('2100-01-01T00:00:00Z')), 'live', now)).toMatchObject({
      ok: false,
      code: 'run-credential-future',
    });
    // Past what a Date holds: refused with words, not a RangeError.
    const far = runLifetime(at(36 ** 12 - 1), 'unknown', now);
    expect(far).toMatchObject({ ok: false, code: 'run-credential-future' });
  });
});
