// The output channel's line for a 401 while no key is stored (extension/noKey.ts):
// it names the missing key and the command, never "rejected the API key".
import { describe, expect, it } from 'vitest';
import { explainNoKey, NO_KEY_MESSAGE } from '../../extension/noKey.js';

const line401 = 'GET /v1/models 401 4ms [bad-key] The upstream rejected the API key: wrong, missing, deleted or badly formatted. Re-copy the key from the console (LOOPGATE_API_KEY, or Loopgate: Set API Key).';

describe('explainNoKey', () => {
  it('replaces the rejected-key hint of a 401 when no key is stored', () => {
    const t = explainNoKey({ line: line401, status: 401, diagnosis: 'bad-key' }, false);
    expect(t.line).toBe(`GET /v1/models 401 4ms [no-key] ${NO_KEY_MESSAGE}`);
    expect(t.line).not.toMatch(/rejected/);
    expect(t.line).toMatch(/Loopgate: Set API Key/);
    expect(t.diagnosis).toBe('no-key');
  });

  it('leaves the line alone with a key stored, and for other statuses', () => {
    expect(explainNoKey({ line: line401, status: 401, diagnosis: 'bad-key' }, true).line).toBe(line401);
    const ok = { line: 'GET /v1/models 200 3ms', status: 200 };
    expect(explainNoKey(ok, false)).toBe(ok);
    const forbidden = { line: 'POST /v1/responses 403 gpt-4.1 9ms [permission] …', status: 403, diagnosis: 'permission' };
    expect(explainNoKey(forbidden, false)).toBe(forbidden);
  });

  it('a 401 line without a code still says no key is stored', () => {
    expect(explainNoKey({ line: 'GET /v1/models 401 4ms', status: 401 }, false).line).toBe(`GET /v1/models 401 4ms [no-key] ${NO_KEY_MESSAGE}`);
  });
});
