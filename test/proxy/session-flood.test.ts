// Issue 39 H-3: the session book cannot be grown, joined or flushed without the
// local token, and what a token holder sends is capped (ids by length, lists by
// count with "and N more"). The list answer carries no seqs (the detail does).
// Through the real proxy and real sockets.
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localApi } from '../../client/local-api-client.js';
import { SESSION_LIST_CAP } from '../../core/agent-session.js';
import { KEYS, startStack, TOKEN, type Stack } from './stack.js';

let stack: Stack;
const api = () => localApi({ url: stack.proxy.url, token: TOKEN });
const MINE = 'c0ffee00-0000-4000-8000-00000000mine';
const CLAUDE_UA = 'claude-cli/2.1.332 (external, cli)';

beforeAll(async () => {
  stack = await startStack({ keys: [{ name: 'claude', key: KEYS.claude, named: true }] });
});
afterAll(async () => stack?.close());

/** 16 KB of id, distinct per `i`. */
function bigId(i: number): string {
  return `${i}-`.padEnd(16 * 1024, 'x');
}

async function sessionsAnswer(): Promise<{ text: string; ids: string[] }> {
  const res = await fetch(`${stack.proxy.url}/_loopgate/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  const text = await res.text();
  const ids = (JSON.parse(text) as { sessions: Array<{ id: string }> }).sessions.map((s) => s.id);
  return { text, ids };
}

/** One request over node:http (which sends any Host, and keeps connections alive); resolves to the status. */
function send(
  agent: Agent,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<number> {
  const url = new URL(path, stack.proxy.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends `count` requests over `width` kept-alive connections; the statuses seen. */
async function flood(
  count: number,
  width: number,
  one: (agent: Agent, i: number) => Promise<number>,
): Promise<Set<number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: width });
  const statuses = new Set<number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) statuses.add(await one(agent, next++));
    }),
  );
  agent.destroy();
  return statuses;
}

describe('sessions under a flood without the token (H-3a, H-3b)', () => {
  it('never creates, joins or grows a session for a refused request; the user’s session stays the latest', async () => {
    await stack
      .anthropic()
      .messages.create(
        { model: 'claude-haiku-5-5', max_tokens: 8, messages: [{ role: 'user', content: 'mine' }] },
        { headers: { 'x-claude-code-session-id': MINE, 'user-agent': CLAUDE_UA } },
      );
    const before = await sessionsAnswer();
    expect(before.ids[0]).toBe(`claude-code:${MINE}`);

    // 500 tokenless models lists in one named session, each with a distinct 16 KB sub-agent id.
    const grow = await flood(500, 8, (agent, i) =>
      send(agent, 'GET', '/v1/models', {
        'x-claude-code-session-id': 'grow',
        'x-claude-code-agent-id': bigId(i),
        'user-agent': CLAUDE_UA,
      }),
    );
    expect(grow).toEqual(new Set([401]));
    // 1,000 more, each naming a session of its own, with a wrong token or none: more than the book keeps.
    const evict = await flood(1000, 8, (agent, i) =>
      send(
        agent,
        'POST',
        '/v1/chat/completions',
        {
          'content-type': 'application/json',
          'x-claude-code-session-id': `evict-${i}`,
          'user-agent': CLAUDE_UA,
          ...(i % 2 ? { authorization: 'Bearer lg-local-wrong-token-0000000000000000' } : {}),
        },
        JSON.stringify({ model: 'claude-haiku-5-5', messages: [{ role: 'user', content: `x${i}` }] }),
      ),
    );
    expect(evict).toEqual(new Set([401]));
    // A guard refusal (a foreign Host) with the right token names a session too.
    const guarded = await flood(1, 1, (agent) =>
      send(agent, 'GET', '/v1/models', {
        authorization: `Bearer ${TOKEN}`,
        'x-claude-code-session-id': 'guarded',
        'user-agent': CLAUDE_UA,
        host: 'evil.example',
      }),
    );
    expect(guarded).toEqual(new Set([403]));

    const after = await sessionsAnswer();
    expect(after.ids).toEqual(before.ids);
    expect(after.ids[0]).toBe(`claude-code:${MINE}`);
    expect(after.ids.some((id) => /grow|evict|guarded/.test(id))).toBe(false);
    // Bounded: the one session's answer, not megabytes.
    expect(after.text.length).toBeLessThan(8 * 1024);
  }, 180_000);

  it('caps a token holder’s ids by length and each list by count, with how many more', async () => {
    // Both under the proxy's 32 KB of headers.
    const longSession = 's'.repeat(8 * 1024);
    const headers = (i: number) => ({
      'x-claude-code-session-id': longSession,
      'x-claude-code-agent-id': bigId(i).slice(0, 8 * 1024),
      'user-agent': CLAUDE_UA,
    });
    const extra = 5;
    const n = SESSION_LIST_CAP + extra;
    const client = stack.anthropic();
    for (let i = 0; i < n; i++) {
      // A model no key serves is still asked upstream (and answered 404 there): each is a model of the session.
      await client.messages
        .create(
          { model: `claude-haiku-5-5-${i}`, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
          { headers: headers(i) },
        )
        .catch(() => undefined);
      // A path per request: each is a route of the session.
      const res = await fetch(`${stack.proxy.url}/v1/things/${i}`, {
        headers: { ...headers(i), authorization: `Bearer ${TOKEN}` },
      });
      await res.arrayBuffer();
    }
    const { sessions } = await api().sessions();
    const s = sessions[0]!;
    expect(s.id.length).toBeLessThanOrEqual('claude-code:'.length + 96);
    expect(s.id.startsWith('claude-code:sss')).toBe(true);
    expect(s.requests).toBe(2 * n);
    expect(s.agents).toHaveLength(SESSION_LIST_CAP);
    for (const a of s.agents) expect(a.length).toBeLessThanOrEqual(96);
    // Two long ids with one head stay apart (the hash of the whole).
    expect(new Set(s.agents).size).toBe(SESSION_LIST_CAP);
    expect(s.models).toHaveLength(SESSION_LIST_CAP);
    expect(s.routes).toHaveLength(SESSION_LIST_CAP);
    expect(s.more).toMatchObject({ agents: extra, models: extra });
    expect(s.more!.routes).toBeGreaterThanOrEqual(extra);
    expect(JSON.stringify(sessions).length).toBeLessThan(16 * 1024);
    // The detail finds it by the bounded id.
    expect((await api().session(s.id)).session.requests).toBe(2 * n);
  });

  it('lists sessions without their seqs; the detail carries them', async () => {
    const fresh = 'c0ffee00-0000-4000-8000-0000000fresh';
    await stack
      .anthropic()
      .messages.create(
        { model: 'claude-haiku-5-5', max_tokens: 8, messages: [{ role: 'user', content: 'fresh' }] },
        { headers: { 'x-claude-code-session-id': fresh, 'user-agent': CLAUDE_UA } },
      );
    const res = await fetch(`${stack.proxy.url}/_loopgate/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const list = (await res.json()) as { sessions: Array<Record<string, unknown>> };
    expect(list.sessions.length).toBeGreaterThan(0);
    for (const s of list.sessions) expect(s).not.toHaveProperty('seqs');
    const detail = await api().session(`claude-code:${fresh}`);
    expect(detail.seqs).toHaveLength(1);
    expect(detail.turns.map((t) => t.seq)).toEqual(detail.seqs);
  });
});
