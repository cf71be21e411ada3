// Issue 14: one proxy, several keys. Each request goes to the key whose group
// lists its model and serves its protocol natively; the bridge only when none
// does. The simulator's request record (credential fingerprints) shows which
// key and which path the upstream really got.
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../simulator/index.js';
import { KEYS, logRecords, startStack, TOKEN, until, type Stack, namedKeys } from './stack.js';
import { sharedForAll } from '../kit/lifecycle.js';

const stack = sharedForAll(() =>
  startStack({
    key: undefined,
    keys: namedKeys({ claude: KEYS.claude, default: KEYS.default, cheap: KEYS.chatOnly }),
  }),
);

/** The one upstream request a client call made, with the fingerprint of the key it carried. */
function upstreamSaw(): { path: string; key: string } {
  const reqs = stack.sim.requests.filter((r) => !r.path.startsWith('/v1/models'));
  expect(reqs).toHaveLength(1);
  const req = reqs[0]!;
  const fps = new Set(req.credentials.map((c) => c.fingerprint));
  expect(fps.size).toBe(1);
  const fp = [...fps][0];
  const name = Object.entries({ claude: KEYS.claude, default: KEYS.default, cheap: KEYS.chatOnly }).find(
    ([, k]) => fingerprint(k) === fp,
  )?.[0];
  return { path: req.path.split('?')[0]!, key: name ?? 'unknown' };
}

describe('several keys, one proxy', () => {
  it('serves Claude on Messages, Responses and chat natively, each with the key whose group has them', async () => {
    stack.sim.clearRequests();
    const claude = await stack
      .anthropic()
      .messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 32,
        messages: [{ role: 'user', content: 'hello claude' }],
      })
      .withResponse();
    expect(claude.data.content[0]).toMatchObject({ type: 'text' });
    expect(claude.response.headers.get('x-loopgate-route')).toBe('claude native');
    expect(upstreamSaw()).toEqual({ path: '/v1/messages', key: 'claude' });

    stack.sim.clearRequests();
    const responses = await stack
      .openai()
      .responses.create({ model: 'gpt-4o-mini', input: 'hello responses' })
      .withResponse();
    expect(responses.data.output_text).toContain('hello responses');
    expect(responses.response.headers.get('x-loopgate-route')).toBe('default native');
    expect(upstreamSaw()).toEqual({ path: '/v1/responses', key: 'default' });

    stack.sim.clearRequests();
    const chat = await stack
      .openai()
      .chat.completions.create({ model: 'deepseek-reasoner', messages: [{ role: 'user', content: 'hello chat' }] })
      .withResponse();
    expect(chat.data.choices[0]!.message.content).toContain('hello chat');
    expect(chat.response.headers.get('x-loopgate-route')).toBe('cheap native');
    expect(upstreamSaw()).toEqual({ path: '/v1/chat/completions', key: 'cheap' });
  });

  it('bridges only when no key serves the protocol natively, over the key that serves the model on chat', async () => {
    stack.sim.clearRequests();
    const r = await stack.openai().responses.create({ model: 'deepseek-reasoner', input: 'bridged' }).withResponse();
    expect(r.data.output_text).toContain('bridged');
    expect(r.response.headers.get('x-loopgate-route')).toBe('cheap bridged');
    expect(upstreamSaw()).toEqual({ path: '/v1/chat/completions', key: 'cheap' });
  });

  it("GET /v1/models is the union of the keys' lists, each model once, as the upstream gave it", async () => {
    const ours = (await (
      await fetch(`${stack.proxy.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { object: string; data: Array<{ id: string }> };
    expect(ours.object).toBe('list');
    const direct = async (key: string) =>
      (
        (await (
          await fetch(`${stack.sim.baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } })
        ).json()) as { data: Array<{ id: string }> }
      ).data;
    const expected = new Map<string, unknown>();
    for (const key of [KEYS.claude, KEYS.default, KEYS.chatOnly])
      for (const m of await direct(key)) if (!expected.has(m.id)) expected.set(m.id, m);
    expect(ours.data).toEqual([...expected.values()]);
    expect(new Set(ours.data.map((m) => m.id)).size).toBe(ours.data.length);
  });

  it('a model no key lists: 404 with the closest IDs and which key has each, nothing sent upstream', async () => {
    stack.sim.clearRequests();
    const res = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonet-4-6', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(404);
    const msg = ((await res.json()) as { error: { message: string } }).error.message;
    expect(msg).toMatch(
      /No key of this proxy lists model "claude-sonet-4-6"; closest: "claude-sonnet-4-6" \(claude, cheap\)/,
    );
    expect(stack.sim.requests.filter((r) => !r.path.startsWith('/v1/models'))).toEqual([]);
  });

  it('logs the key by name and fingerprint, never the key, and shows the name on the console', async () => {
    const records = await until(
      () => {
        const r = logRecords(stack.logFile).filter((x) => x.key);
        return r.length >= 4 ? r : undefined;
      },
      5000,
      'records with a key',
    );
    expect(new Set(records.map((r) => r.key))).toEqual(new Set(['claude', 'default', 'cheap']));
    for (const r of records) expect(r.keyFingerprint).toMatch(/^[0-9a-f]{12}$/);
    const text = JSON.stringify(logRecords(stack.logFile)) + stack.traffic.join('\n');
    for (const k of [KEYS.claude, KEYS.default, KEYS.chatOnly]) expect(text).not.toContain(k);
    expect(stack.traffic.some((l) => /^POST \/v1\/messages 200 claude-sonnet-4-6 .* key claude\b/.test(l))).toBe(true);
  });
});

describe('several keys with the bridge off', () => {
  it('a protocol no key serves natively: the diagnosis says what each key serves the model on', async () => {
    const s = await startStack({
      key: undefined,
      bridge: 'off',
      keys: namedKeys({ default: KEYS.default, cheap: KEYS.chatOnly }),
    });
    try {
      await s.proxy.refreshModels();
      const res = await fetch(`${s.proxy.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'deepseek-reasoner', input: 'x' }),
      });
      expect(res.status).toBe(404);
      expect(res.headers.get('x-loopgate-route')).toBe('cheap native');
      const hint = await until(
        () => s.traffic.find((l) => l.includes('[protocol-unsupported]')),
        5000,
        'the traffic line',
      );
      expect(hint).toContain("This proxy's keys serve deepseek-reasoner on: cheap: chat.");
    } finally {
      await s.close();
    }
  });
});

describe('failover (opt-in) and refresh', () => {
  // The simulator's rpm2 key allows two requests a minute, then answers 429.
  const keys = () => [
    { name: 'limited', key: KEYS.rpm2, named: true },
    { name: 'paid', key: KEYS.default, named: true },
  ];
  const ask = (s: Stack) =>
    fetch(`${s.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    });

  it('without --failover a 429 reaches the client; with it, the next key that serves the model takes the request', async () => {
    const off = await startStack({ key: undefined, keys: keys() });
    try {
      await off.proxy.refreshModels();
      for (let i = 0; i < 2; i++) expect((await ask(off)).headers.get('x-loopgate-route')).toBe('limited native');
      const res = await ask(off);
      expect(res.status).toBe(429);
      expect(res.headers.get('x-loopgate-diagnosis')).toBe('rate-limited');
      expect(res.headers.get('x-loopgate-route')).toBe('limited native');
    } finally {
      await off.close();
    }
    const on = await startStack({ key: undefined, keys: keys(), failover: true });
    try {
      await on.proxy.refreshModels();
      for (let i = 0; i < 2; i++) expect((await ask(on)).status).toBe(200);
      on.sim.clearRequests();
      const res = await ask(on);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-loopgate-route')).toBe('paid native');
      const fps = on.sim.requests.map((r) => r.credentials[0]!.fingerprint);
      expect(fps).toEqual([fingerprint(KEYS.rpm2), fingerprint(KEYS.default)]);
      expect(
        on.hints.some((h) => /Key "limited" answered rate-limited; --failover sent the request to key "paid"/.test(h)),
      ).toBe(true);
      const rec = await until(() => logRecords(on.logFile).find((r) => r.key === 'paid'), 5000, 'the record');
      expect(rec).toMatchObject({ status: 200, retries: 1 });
      // The first key's 429 is not this request's outcome.
      expect(rec.errorCode).toBeUndefined();
      expect(on.proxy.stats.errors).toBe(0);
    } finally {
      await on.close();
    }
  });

  it("GET /_loopgate/refresh fetches every key's list and says what each has, by name", async () => {
    const s = await startStack({
      key: undefined,
      keys: [...keys(), { name: 'broke', key: KEYS.noBalance, named: true }],
    });
    try {
      const res = await fetch(`${s.proxy.url}/_loopgate/refresh`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        keys: Array<{ name: string; fingerprint: string; models: number | null; failure: string | null }>;
      };
      expect(body.keys.map((k) => k.name)).toEqual(['limited', 'paid', 'broke']);
      expect(body.keys[0]!.models).toBeGreaterThan(0);
      expect(body.keys[1]!.models).toBeGreaterThan(0);
      // A key whose list fails is named with why, and marked unavailable (no models).
      expect(body.keys[2]).toMatchObject({ models: null, failure: 'HTTP 403' });
      expect(JSON.stringify(body)).not.toContain(KEYS.default);
      // The editor's per-key lists, and the health answer: names, fingerprints and models, no key.
      const lists = (await (
        await fetch(`${s.proxy.url}/_loopgate/keys`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).json()) as { keys: Array<{ name: string; models: Array<{ id: string }> | null }> };
      expect(lists.keys.map((k) => [k.name, k.models === null])).toEqual([
        ['limited', false],
        ['paid', false],
        ['broke', true],
      ]);
      expect(lists.keys[1]!.models!.map((m) => m.id)).toContain('gpt-4o-mini');
      const health = await (
        await fetch(`${s.proxy.url}/_loopgate/health`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).text();
      for (const text of [JSON.stringify(lists), health])
        for (const k of [KEYS.default, KEYS.rpm2, KEYS.noBalance]) expect(text).not.toContain(k);
    } finally {
      await s.close();
    }
  });
});
