// The pure rules of the WebSocket transport (rules/wire/websocket.ts), the
// diagnosis of refused upgrades and of GETs on POST-only paths, the refusal
// memory's clock, and the simulator fixture's `responses_websocket` setting.
import { describe, expect, it } from 'vitest';
import { diagnose, type DiagnosisContext } from '../../rules/diagnosis/diagnose.js';
import {
  isWebSocketRefusal,
  isWebSocketUpgrade,
  relayableCloseCode,
  WEBSOCKET_FALLBACK_STATUS,
} from '../../rules/wire/websocket.js';
import { WebSocketRefusals } from '../../proxy/pipeline/websocket-refusals.js';
import { defaultFixture, validateFixture } from '../../simulator/index.js';

const ctx = (over: Partial<DiagnosisContext> = {}): DiagnosisContext => ({
  method: 'POST',
  originalPath: '/v1/responses',
  canonicalPath: '/v1/responses',
  time: new Date(0),
  ...over,
});

describe('WebSocket upgrades: the rules', () => {
  it("an upgrade is Upgrade: websocket with upgrade among Connection's tokens, in any case", () => {
    expect(isWebSocketUpgrade({ upgrade: 'websocket', connection: 'Upgrade' })).toBe(true);
    expect(isWebSocketUpgrade({ upgrade: 'WebSocket', connection: 'keep-alive, Upgrade' })).toBe(true);
    expect(isWebSocketUpgrade({ upgrade: 'h2c', connection: 'Upgrade' })).toBe(false);
    expect(isWebSocketUpgrade({ upgrade: 'websocket', connection: 'keep-alive' })).toBe(false);
    expect(isWebSocketUpgrade({ connection: 'Upgrade' })).toBe(false);
  });

  it('Codex falls back on 426; the route-has-no-WebSocket answers are the ones a relay without the route gives', () => {
    expect(WEBSOCKET_FALLBACK_STATUS).toBe(426);
    for (const s of [400, 404, 405, 426, 501]) expect(isWebSocketRefusal(s)).toBe(true);
    for (const s of [401, 403, 429, 500, 502, 503]) expect(isWebSocketRefusal(s)).toBe(false);
  });

  it('close codes that are never sent become ones that may be', () => {
    expect(relayableCloseCode(1000)).toBe(1000);
    expect(relayableCloseCode(4001)).toBe(4001);
    expect(relayableCloseCode(1005)).toBe(1000);
    expect(relayableCloseCode(1006)).toBe(1001);
    expect(relayableCloseCode(1015)).toBe(1001);
    expect(relayableCloseCode(1004)).toBe(1000);
    expect(relayableCloseCode(2000)).toBe(1000);
  });
});

describe('diagnoses of a 404 read the method (issue 26)', () => {
  it('a refused upgrade is websocket-unsupported, never protocol-unsupported or duplicate-v1', () => {
    expect(diagnose({ status: 404, code: 'invalid_url' }, ctx({ method: 'GET', upgrade: true }))?.code).toBe(
      'websocket-unsupported',
    );
    expect(
      diagnose({ status: 404 }, ctx({ method: 'GET', upgrade: true, originalPath: '/v1/v1/responses' }))?.code,
    ).toBe('websocket-unsupported');
    expect(diagnose({ status: 405 }, ctx({ method: 'GET', upgrade: true }))?.code).toBe('websocket-unsupported');
    // A key, limit or outage problem keeps its own diagnosis on an upgrade too.
    expect(diagnose({ status: 401 }, ctx({ method: 'GET', upgrade: true }))?.code).toBe('bad-key');
    expect(diagnose({ status: 429 }, ctx({ method: 'GET', upgrade: true }))?.code).toBe('rate-limited');
  });

  it('a GET on a POST-only path is no protocol verdict; the POST keeps its', () => {
    for (const path of ['/v1/responses', '/v1/chat/completions', '/v1/messages', '/v1/messages/count_tokens']) {
      const d = diagnose(
        { status: 404, code: 'invalid_url' },
        ctx({ method: 'GET', canonicalPath: path, originalPath: path }),
      );
      expect(d?.code, path).toBe('unknown-endpoint');
      expect(d?.hint).toMatch(/POST only/);
    }
    expect(diagnose({ status: 404 }, ctx({ method: 'GET', originalPath: '/v1/v1/responses' }))?.code).toBe(
      'unknown-endpoint',
    );
    expect(diagnose({ status: 404 }, ctx())?.code).toBe('protocol-unsupported');
    // GET /v1/responses/{id} is a real endpoint: its 404 is not about the method.
    expect(diagnose({ status: 404 }, ctx({ method: 'GET', canonicalPath: '/v1/responses/resp_1' }))?.code).toBe(
      'unknown-endpoint',
    );
    expect(
      diagnose({ status: 404 }, ctx({ method: 'GET', canonicalPath: '/v1/v1/models', originalPath: '/v1/v1/models' }))
        ?.code,
    ).toBe('duplicate-v1');
  });
});

describe('the refusal memory', () => {
  it('per key and path, for its time to live', () => {
    let now = 0;
    const memory = new WebSocketRefusals({ ttlMs: 1000, now: () => now });
    memory.remember('fp-a', '/v1/responses');
    expect(memory.isRemembered('fp-a', '/v1/responses')).toBe(true);
    expect(memory.isRemembered('fp-b', '/v1/responses')).toBe(false);
    expect(memory.isRemembered('fp-a', '/v1/realtime')).toBe(false);
    now = 999;
    expect(memory.isRemembered('fp-a', '/v1/responses')).toBe(true);
    now = 1000;
    expect(memory.isRemembered('fp-a', '/v1/responses')).toBe(false);
  });
});

describe('the simulator fixture: responses_websocket per group', () => {
  const withGroup = (group: Record<string, unknown>) => ({
    groups: { g: { protocols: ['responses'], models: ['m'], ...group } },
    keys: [],
  });

  it('is a boolean, on a group that serves Responses; off when absent (the demo fixture has it nowhere)', () => {
    expect(validateFixture(withGroup({ responses_websocket: true })).groups.g!.responses_websocket).toBe(true);
    expect(() => validateFixture(withGroup({ responses_websocket: 'yes' }))).toThrow(
      /groups\.g\.responses_websocket: must be true or false/,
    );
    expect(() =>
      validateFixture({ groups: { g: { protocols: ['chat'], models: ['m'], responses_websocket: true } }, keys: [] }),
    ).toThrow(/needs "responses"/);
    expect(Object.values(defaultFixture.groups).some((g) => g.responses_websocket)).toBe(false);
  });
});
