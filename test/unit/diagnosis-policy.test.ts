// Issue 32: a diagnosis carries its policy. What a code calls for (fail over
// to the next key, refresh the key's model list, name what each key serves,
// how the editor's chat reports it and what to do there) is one row of
// DIAGNOSIS_POLICY; the relay and the extension's chat errors read that row,
// so a new code, or a code that should now fail over, is one edit.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../extension/lm/chat-errors.js';
import {
  DIAGNOSIS_POLICY,
  diagnose,
  diagnosisPolicy,
  parseErrorBody,
  type DiagnosisCode,
} from '../../rules/diagnosis/diagnose.js';

const CODES = Object.keys(DIAGNOSIS_POLICY) as DiagnosisCode[];
const CTX = { path: '/v1/chat/completions', model: 'gpt-4o-mini' };

describe('one diagnosis table carries its policy', () => {
  it("the editor's chat reports each code as its row says, whatever the status (it keeps no table of its own)", () => {
    for (const code of CODES) {
      const row = DIAGNOSIS_POLICY[code];
      // A status that, alone, would say nothing: the proxy's diagnosis decides.
      const f = describeFailure(400, '{}', { ...CTX, diagnosisHeader: code });
      expect(f.kind, code).toBe(row.editor);
      expect(f.diagnosis).toBe(code);
      if (row.editorAdvice) expect(f.message, code).toContain(row.editorAdvice);
      for (const other of CODES) {
        const advice = DIAGNOSIS_POLICY[other].editorAdvice;
        if (advice && advice !== row.editorAdvice)
          expect(f.message, `${code} has ${other}'s advice`).not.toContain(advice);
      }
    }
  });

  it("without the proxy's diagnosis (or with a code of its own refusals) the local diagnosis of the answer decides", () => {
    const bad = describeFailure(401, '{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}', CTX);
    expect(bad).toMatchObject({ kind: 'noPermissions', diagnosis: 'bad-key' });
    expect(bad.message).toContain(DIAGNOSIS_POLICY['bad-key'].editorAdvice);
    const limited = describeFailure(429, '{}', { ...CTX, diagnosisHeader: 'local-refusal-code', retryAfter: '7' });
    expect(limited).toMatchObject({ kind: 'blocked', diagnosis: 'local-refusal-code' });
    expect(limited.message).toContain('Retry after 7 s.');
    expect(diagnosisPolicy('toString')).toBeUndefined();
  });

  it('an exhausted balance is Blocked with the balance hint, not the group advice of a 403 (the status table gave it)', () => {
    const body =
      '{"error":{"message":"Insufficient balance","type":"insufficient_quota","code":"insufficient_user_quota"}}';
    expect(
      diagnose(parseErrorBody(403, body), {
        method: 'POST',
        originalPath: CTX.path,
        canonicalPath: CTX.path,
        time: new Date(),
      })?.code,
    ).toBe('insufficient-balance');
    const f = describeFailure(403, body, CTX);
    expect(f.kind).toBe('blocked');
    expect(f.message).toMatch(/Insufficient balance/);
    expect(f.message).not.toContain(DIAGNOSIS_POLICY.permission.editorAdvice);
  });

  it('the relay and the chat errors decide nothing on a code: they read its policy', () => {
    const root = join(__dirname, '..', '..');
    const literal = new RegExp(`(['"\`])(${CODES.map((c) => c.replace(/-/g, '\\-')).join('|')})\\1`);
    for (const file of ['proxy/pipeline/relay.ts', 'extension/lm/chat-errors.ts']) {
      const found = readFileSync(join(root, file), 'utf8')
        .split('\n')
        .filter((line) => !line.trim().startsWith('//') && literal.test(line));
      expect(found, file).toEqual([]);
    }
    // The guard sees a planted decision.
    expect(literal.test("if (diagnosis?.code === 'rate-limited') failOver();")).toBe(true);
  });

  it('the policy is the one the relay had: quota and rate fail over, a stale list is refreshed, a missing protocol names each key', () => {
    const where = (f: 'failover' | 'refreshModels' | 'keysHint') => CODES.filter((c) => DIAGNOSIS_POLICY[c][f]).sort();
    expect(where('failover')).toEqual(['insufficient-balance', 'rate-limited']);
    expect(where('refreshModels')).toEqual(['model-not-found', 'permission']);
    expect(where('keysHint')).toEqual(['protocol-unsupported']);
  });
});
