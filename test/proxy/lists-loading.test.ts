// Issue 24, item 7: right after start, while the keys' /models lists were
// still loading, a model no known list had went to the first key whose list
// was unknown: `deepseek-reasoner` reached the `claude` key and came back 503
// "No available channel" (test/cli/serve-keys.test.ts, once in eight runs on
// a fresh clone). The race is made deterministic here: the upstream holds both
// keys' list answers until the test releases them.
import { expect, it } from 'vitest';
import OpenAI from 'openai';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { startRoutingUpstream, type RoutingUpstream } from './routing-upstream.js';
import { TOKEN, until } from './stack.js';
import { closedAfterEach } from '../kit/lifecycle.js';

let upstream: RoutingUpstream | undefined;
let proxy: RunningProxy | undefined;
const closing = closedAfterEach();

/** The relay: a `claude` key listing Sonnet for chat and Messages, a `cheap` one listing a reasoner for chat. */
async function startTwoKeyUpstream(): Promise<RoutingUpstream> {
  return closing(
    await startRoutingUpstream([
      { key: 'sk-claude-0123456789abcdef0123', models: [{ id: 'claude-sonnet-4-6', listed: ['chat', 'messages'] }] },
      { key: 'sk-cheap-0123456789abcdef01234', models: [{ id: 'deepseek-reasoner', listed: ['chat'] }] },
    ]),
  );
}

/** The proxy under test: the `claude` key first, then `cheap`, no retries. */
function startTwoKeyProxy(routing: RoutingUpstream, onHint?: (hint: string) => void): Promise<RunningProxy> {
  return startProxy({
    upstream: `${routing.url}/v1`,
    keys: [
      { name: 'claude', key: 'sk-claude-0123456789abcdef0123', named: true },
      { name: 'cheap', key: 'sk-cheap-0123456789abcdef01234', named: true },
    ],
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile: false,
    retries: 0,
    onHint,
  });
}

it('a model no known list has waits for the lists still loading, then goes to the key that lists it (not the first key)', async () => {
  upstream = await startTwoKeyUpstream();
  upstream.hold('sk-claude-0123456789abcdef0123');
  upstream.hold('sk-cheap-0123456789abcdef01234');
  const hints: string[] = [];
  proxy = closing(await startTwoKeyProxy(upstream, (h) => hints.push(h)));
  // Both lists are being fetched (the proxy asks at start) and neither has arrived.
  await until(() => upstream!.listRequests.length === 2, 5000, 'both list fetches');
  const asked = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 }).chat.completions
    .create({ model: 'deepseek-reasoner', messages: [{ role: 'user', content: 'x' }] })
    .withResponse();
  asked.catch(() => undefined);
  // The request has been routed: either it waits (and says so), or it went upstream (the bug).
  await until(
    () => hints.some((h) => h.includes('waits for the model lists')) || upstream!.seen.length > 0,
    5000,
    'the routing decision',
  );
  expect(upstream.seen).toEqual([]);
  // The first list arrives without the model: still no guess while the other loads.
  upstream.release('sk-claude-0123456789abcdef0123');
  await until(() => proxy!.keyStatus()[0]!.models !== undefined, 5000, "claude's list");
  expect(upstream.seen).toEqual([]);
  upstream.release('sk-cheap-0123456789abcdef01234');
  const r = await asked;
  expect(r.data.choices[0]!.message.content).toBe('ok');
  expect(r.response.headers.get('x-loopgate-route')).toBe('cheap native');
  expect(upstream.seen).toEqual([
    { key: 'sk-cheap-0123456789abcdef01234', path: '/v1/chat/completions', model: 'deepseek-reasoner' },
  ]);
  expect(hints.find((h) => h.includes('waits for the model lists'))).toMatch(
    /key "claude", "cheap" \(still loading, up to 15 s\)/,
  );
});

it('a model a known list has does not wait for the lists still loading', async () => {
  upstream = await startTwoKeyUpstream();
  upstream.hold('sk-cheap-0123456789abcdef01234');
  proxy = closing(await startTwoKeyProxy(upstream));
  await until(() => proxy!.keyStatus()[0]!.models !== undefined, 5000, "claude's list");
  const r = await new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 }).chat.completions
    .create({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'x' }] })
    .withResponse();
  expect(r.response.headers.get('x-loopgate-route')).toBe('claude native');
  expect(proxy.keyStatus()[1]!.models).toBeUndefined();
});
