// Model names that could forge console lines, the envelope of early refusals on
// /v1/messages, the model cache across a key change, and body caps that cut a key.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEYS, startStack, TOKEN, until } from './stack.js';
import { hostOf, httpRequest } from './raw.js';
import type { ProxyOptions } from '../../core/options.js';
import { startProxy } from '../../proxy/server.js';
import { sharedForAll } from '../kit/lifecycle.js';

const stack = sharedForAll(() => startStack());

/** A proxy of the test's own (the test closes it) in front of the shared simulator, with the default key. */
const proxyOnSim = (more: Partial<ProxyOptions>) =>
  startProxy({ upstream: stack.sim.url, key: KEYS.default, token: TOKEN, port: 0, allowHttp: true, ...more });

describe('model names, refusal envelopes, the model cache and body caps', () => {
  it('a model name with a smart quote or a newline still gets the upstream answer, and cannot forge console lines', async () => {
    const res = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini\u201d\nPOST /v1/fake 200',
        messages: [{ role: 'user', content: 'x' }],
      }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('x-loopgate-diagnosis')).toBe('model-not-found');
    expect(res.headers.get('x-loopgate-warning')).toContain('\\u201d');
    const line = await until(() => stack.traffic.find((l) => l.includes('\\x0a')), 3000, 'the escaped line');
    expect(line.split('\n')).toHaveLength(1);
  });

  it('early refusals on /v1/messages use the Anthropic envelope', async () => {
    const res = await httpRequest(stack.proxy.url, {
      method: 'POST',
      path: '/v1/messages',
      headers: { host: hostOf(stack.proxy.url), authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body)).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
  });

  it('a model list fetched with the previous key never fills the cache after setKey', async () => {
    const proxy = await proxyOnSim({ logFile: false });
    try {
      proxy.setKey(KEYS.narrow); // the start-up fetch with the default key is still in flight
      await proxy.refreshModels();
      await until(() => proxy.modelIds(), 3000, 'a model list');
      expect(proxy.modelIds()).toEqual(['gpt-4o-mini']);
    } finally {
      await proxy.close();
    }
  });

  it('--log-bodies never keeps the front of a key cut by the body cap, in any script', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-cut-'));
    const logFile = join(dir, 'traffic.jsonl');
    const key = 'sk-cutcanary' + 'Q'.repeat(10) + '7'.repeat(20);
    const proxy = await proxyOnSim({ logFile, logBodies: true, logBodyBytes: 4096 });
    try {
      const cjk = '中'.repeat(1530); // ~4590 bytes: the key starts past the byte cap but before the character cap
      for (const filler of [cjk, 'a'.repeat(4090), 'a'.repeat(4070)]) {
        await fetch(`${proxy.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: filler + key }] }),
        });
      }
      await until(
        () => {
          try {
            return readFileSync(logFile, 'utf8').split('\n').filter(Boolean).length >= 3 || undefined;
          } catch {
            return undefined;
          }
        },
        5000,
        'three log lines',
      );
      const text = readFileSync(logFile, 'utf8');
      expect(text).not.toContain('sk-cutcanary');
      expect(text).not.toContain('cutcanaryQQ');
    } finally {
      await proxy.close();
    }
  });
});
