// The output channel's line for a 401 while no key is stored (extension/no-key.ts):
// it names the missing key and the command, never "rejected the API key". The
// proxy sends the line, its code and its hint apart (core/ipc.ts), so nothing
// is cut out of a string.
import { describe, expect, it } from 'vitest';
import { explainNoKey, NO_KEY_MESSAGE } from '../../extension/no-key.js';
import { requestLine } from '../../core/request-line.js';

const rejected =
  'The upstream rejected the API key: wrong, missing, deleted or badly formatted. Re-copy the key from the console (LOOPGATE_API_KEY, or Loopgate: Set API Key).';
const request401 = { line: 'GET /v1/models 401 4ms', status: 401, diagnosis: 'bad-key', hint: rejected };

describe('explainNoKey', () => {
  it('replaces the rejected-key hint of a 401 when no key is stored', () => {
    const t = explainNoKey(request401, false);
    expect(requestLine(t)).toBe(`GET /v1/models 401 4ms [no-key] ${NO_KEY_MESSAGE}`);
    expect(requestLine(t)).not.toMatch(/rejected/);
    expect(requestLine(t)).toMatch(/Loopgate: Set API Key/);
    expect(t.diagnosis).toBe('no-key');
  });

  it('leaves the request alone with a key stored, and for other statuses', () => {
    expect(explainNoKey(request401, true)).toBe(request401);
    expect(requestLine(request401)).toBe(`GET /v1/models 401 4ms [bad-key] ${rejected}`);
    const ok = { line: 'GET /v1/models 200 3ms', status: 200 };
    expect(explainNoKey(ok, false)).toBe(ok);
    expect(requestLine(ok)).toBe('GET /v1/models 200 3ms');
    const forbidden = { line: 'POST /v1/responses 403 gpt-4.1 9ms', status: 403, diagnosis: 'permission', hint: '…' };
    expect(explainNoKey(forbidden, false)).toBe(forbidden);
  });

  it('a 401 without a code still says no key is stored', () => {
    expect(requestLine(explainNoKey({ line: 'GET /v1/models 401 4ms', status: 401 }, false))).toBe(
      `GET /v1/models 401 4ms [no-key] ${NO_KEY_MESSAGE}`,
    );
  });
});
