// Under bridge 'auto', a native attempt refused with 404 endpoint_not_supported
// is retried over Chat Completions before anything reaches the client.
import { expect, it } from 'vitest';
import { KEYS, startStack, TOKEN } from './stack.js';
import { sharedForAll } from '../kit/lifecycle.js';

const stack = sharedForAll(() => startStack({ key: KEYS.chatOnly, bridge: 'auto' }));

it('a model the cached list does not describe: native try, 404, then bridged — the client sees one answer', async () => {
  // gpt-4.1 is not in the chat-only group, so the proxy cannot know its endpoint types in advance.
  const res = await fetch(`${stack.proxy.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4.1', input: 'hi' }),
  });
  expect(stack.sim.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/chat/completions']);
  expect(res.headers.get('x-loopgate-bridge')).toBe('responses->chat');
  // The chat route then says the model is not in the group, in the Responses caller's envelope.
  expect(res.status).toBe(503);
  expect(res.headers.get('x-loopgate-diagnosis')).toBe('model-not-found');
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
});
