// The bridge decision for one key: rules/keys/key-routing.ts decides, fed what the
// BridgePolicy learned from 404 endpoint_not_supported answers.
import { describe, expect, it } from 'vitest';
import { BridgePolicy, bridgeKindForPath, bridgeLabel, type BridgeKind } from '../../proxy/bridge/index.js';
import { decideRoute } from '../../rules/keys/key-routing.js';

/** Would the proxy (one key, its list giving `types` for the model, or not known) bridge this request? */
function bridges(
  policy: BridgePolicy,
  kind: BridgeKind,
  model: string | undefined,
  types: string[] | undefined,
): boolean {
  const models =
    model !== undefined && types ? new Map([[model, { id: model, supported_endpoint_types: types }]]) : undefined;
  const choice = decideRoute({
    keys: [{ name: '', models }],
    model,
    protocol: kind,
    bridge: policy.mode,
    refused: policy.refusals(),
    now: policy.now(),
  });
  return choice.index !== undefined && choice.how === 'bridged';
}

describe('BridgePolicy', () => {
  it("'off' never bridges, 'always' always does", () => {
    const off = new BridgePolicy('off');
    const always = new BridgePolicy('always');
    for (const kind of ['responses', 'messages'] as const) {
      expect(bridges(off, kind, 'm', ['openai'])).toBe(false);
      expect(bridges(always, kind, 'm', ['openai', 'openai-response', 'anthropic'])).toBe(true);
      expect(bridges(always, kind, undefined, undefined)).toBe(true);
    }
    off.rememberUnsupported('responses', 'm');
    expect(bridges(off, 'responses', 'm', undefined)).toBe(false);
  });

  it("'auto' bridges when supported_endpoint_types lacks the protocol but has chat", () => {
    const p = new BridgePolicy('auto');
    expect(bridges(p, 'responses', 'gpt-4o-mini', ['openai'])).toBe(true);
    expect(bridges(p, 'responses', 'gpt-4o-mini', ['openai', 'openai-response'])).toBe(false);
    expect(bridges(p, 'messages', 'claude-sonnet-4-6', ['openai'])).toBe(true);
    expect(bridges(p, 'messages', 'claude-sonnet-4-6', ['openai', 'anthropic'])).toBe(false);
    // No chat either: the native error is the clearer one.
    expect(bridges(p, 'responses', 'x', ['anthropic'])).toBe(false);
    // Unknown model or unknown list: forward as asked.
    expect(bridges(p, 'responses', 'gpt-4o-mini', undefined)).toBe(false);
    expect(bridges(p, 'responses', undefined, ['openai'])).toBe(false);
  });

  it("'auto' remembers a 404 endpoint_not_supported per protocol and model, and forgets it after the ttl", () => {
    let now = 1_000_000;
    const p = new BridgePolicy('auto', { ttlMs: 60_000, now: () => now });
    p.rememberUnsupported('responses', 'gpt-4o-mini');
    expect(bridges(p, 'responses', 'gpt-4o-mini', undefined)).toBe(true);
    expect(bridges(p, 'responses', 'gpt-4o-mini', ['openai', 'openai-response'])).toBe(true);
    expect(bridges(p, 'messages', 'gpt-4o-mini', undefined)).toBe(false);
    expect(bridges(p, 'responses', 'gpt-4.1', undefined)).toBe(false);
    now += 59_999;
    expect(bridges(p, 'responses', 'gpt-4o-mini', undefined)).toBe(true);
    now += 1;
    expect(bridges(p, 'responses', 'gpt-4o-mini', undefined)).toBe(false);
  });

  it('defaults to a 10 minute memory', () => {
    let now = 0;
    const p = new BridgePolicy('auto', { now: () => now });
    p.rememberUnsupported('messages', 'm');
    now = 10 * 60_000 - 1;
    expect(bridges(p, 'messages', 'm', undefined)).toBe(true);
    now = 10 * 60_000;
    expect(bridges(p, 'messages', 'm', undefined)).toBe(false);
  });
});

describe('path helpers', () => {
  it('maps canonical paths and labels', () => {
    expect(bridgeKindForPath('/v1/responses')).toBe('responses');
    expect(bridgeKindForPath('/v1/messages?beta=true')).toBe('messages');
    expect(bridgeKindForPath('/v1/messages/count_tokens')).toBeUndefined();
    expect(bridgeKindForPath('/v1/chat/completions')).toBeUndefined();
    expect(bridgeLabel('responses')).toBe('responses->chat');
    expect(bridgeLabel('messages')).toBe('messages->chat');
  });
});
