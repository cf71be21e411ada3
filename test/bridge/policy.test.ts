import { describe, expect, it } from 'vitest';
import { BridgePolicy, bridgeKindForPath, bridgeLabel } from '../../proxy/bridge/index.js';

describe('BridgePolicy', () => {
  it("'off' never bridges, 'always' always does", () => {
    const off = new BridgePolicy('off');
    const always = new BridgePolicy('always');
    for (const kind of ['responses', 'messages'] as const) {
      expect(off.shouldBridge(kind, 'm', ['openai'])).toBe(false);
      expect(always.shouldBridge(kind, 'm', ['openai', 'openai-response', 'anthropic'])).toBe(true);
      expect(always.shouldBridge(kind, undefined, undefined)).toBe(true);
    }
    off.rememberUnsupported('responses', 'm');
    expect(off.shouldBridge('responses', 'm', undefined)).toBe(false);
  });

  it("'auto' bridges when supported_endpoint_types lacks the protocol but has chat", () => {
    const p = new BridgePolicy('auto');
    expect(p.shouldBridge('responses', 'gpt-4o-mini', ['openai'])).toBe(true);
    expect(p.shouldBridge('responses', 'gpt-4o-mini', ['openai', 'openai-response'])).toBe(false);
    expect(p.shouldBridge('messages', 'claude-sonnet-4-6', ['openai'])).toBe(true);
    expect(p.shouldBridge('messages', 'claude-sonnet-4-6', ['openai', 'anthropic'])).toBe(false);
    // No chat either: the native error is the clearer one.
    expect(p.shouldBridge('responses', 'x', ['anthropic'])).toBe(false);
    // Unknown model or unknown list: forward as asked.
    expect(p.shouldBridge('responses', 'gpt-4o-mini', undefined)).toBe(false);
    expect(p.shouldBridge('responses', undefined, ['openai'])).toBe(false);
  });

  it("'auto' remembers a 404 endpoint_not_supported per protocol and model, and forgets it after the ttl", () => {
    let now = 1_000_000;
    const p = new BridgePolicy('auto', { ttlMs: 60_000, now: () => now });
    p.rememberUnsupported('responses', 'gpt-4o-mini');
    expect(p.shouldBridge('responses', 'gpt-4o-mini', undefined)).toBe(true);
    expect(p.shouldBridge('responses', 'gpt-4o-mini', ['openai', 'openai-response'])).toBe(true);
    expect(p.shouldBridge('messages', 'gpt-4o-mini', undefined)).toBe(false);
    expect(p.shouldBridge('responses', 'gpt-4.1', undefined)).toBe(false);
    now += 59_999;
    expect(p.shouldBridge('responses', 'gpt-4o-mini', undefined)).toBe(true);
    now += 1;
    expect(p.shouldBridge('responses', 'gpt-4o-mini', undefined)).toBe(false);
  });

  it('defaults to a 10 minute memory', () => {
    let now = 0;
    const p = new BridgePolicy('auto', { now: () => now });
    p.rememberUnsupported('messages', 'm');
    now = 10 * 60_000 - 1;
    expect(p.shouldBridge('messages', 'm', undefined)).toBe(true);
    now = 10 * 60_000;
    expect(p.shouldBridge('messages', 'm', undefined)).toBe(false);
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
