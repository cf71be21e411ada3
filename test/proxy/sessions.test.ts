// Requests grouped into sessions (issue 33 §1) through real sockets and the
// official SDKs: by the session a client names, by `loopgate run`'s per-run
// credential, and by the heuristic; read back from /_loopgate/sessions.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localApi } from '../../client/local-api-client.js';
import { runCredential } from '../../rules/access/run-credential.js';
import type { SessionSummary } from '../../core/agent-session.js';
import type { TrafficRecord } from '../../core/record.js';
import { KEYS, logRecords, startStack, TOKEN, type Stack, namedKeys } from './stack.js';

let stack: Stack;
const api = () => localApi({ url: stack.proxy.url, token: TOKEN });

beforeAll(async () => {
  stack = await startStack({
    keys: namedKeys({ default: KEYS.default, claude: KEYS.claude }),
  });
});
afterAll(async () => stack?.close());

async function sessionsNow(): Promise<SessionSummary[]> {
  return (await api().sessions()).sessions;
}

function ask(session: string | undefined, text: string) {
  const client = stack.anthropic();
  return client.messages.create(
    { model: 'claude-haiku-5-5', max_tokens: 16, messages: [{ role: 'user', content: text }] },
    session
      ? { headers: { 'x-claude-code-session-id': session, 'user-agent': 'claude-cli/2.1.332 (external, cli)' } }
      : {},
  );
}

describe('sessions', () => {
  it('keeps two sessions a client names apart, even interleaved', async () => {
    const a = 'a6f0c3d2-0000-4000-8000-000000000001';
    const b = 'a6f0c3d2-0000-4000-8000-000000000002';
    await ask(a, 'one');
    await ask(b, 'two');
    await ask(a, 'three');
    const all = await sessionsNow();
    const sa = all.find((s) => s.id === `claude-code:${a}`);
    const sb = all.find((s) => s.id === `claude-code:${b}`);
    expect(sa).toMatchObject({ source: 'header', client: 'claude-code', requests: 2, turns: 2, errors: 0 });
    expect(sb).toMatchObject({ source: 'header', client: 'claude-code', requests: 1, turns: 1 });
    // Most recently active first.
    expect(all.indexOf(sa!)).toBeLessThan(all.indexOf(sb!));
    expect(sa!.routes).toEqual(['/v1/messages']);
    expect(sa!.keys).toEqual(['claude']);
    const detail = await api().session(sa!.id);
    expect(detail.turns.map((t) => t.status)).toEqual([200, 200]);
    expect(detail.turns.every((t) => t.model === 'claude-haiku-5-5')).toBe(true);
    // The entry's detail carries its session's summary.
    const entry = await api().entry(detail.turns[0]!.id);
    expect(entry.session?.id).toBe(sa!.id);
  });

  it('ties a conversation that grows to one session by the heuristic, and a new system prompt to another', async () => {
    const client = stack.openai();
    const system = { role: 'system' as const, content: 'You are terse. heuristic-test' };
    const first = { role: 'user' as const, content: 'hello' };
    const r1 = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [system, first] });
    const reply = { role: 'assistant' as const, content: r1.choices[0]!.message.content ?? '' };
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [system, first, reply, { role: 'user', content: 'more' }],
    });
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'system', content: 'Another prompt entirely.' }, first],
    });
    const records = (await logUntil((all) => all.filter(isChat).length >= 3)).filter(isChat);
    const [s1, s2, s3] = records.slice(-3).map((r) => r.session);
    expect(s1).toMatchObject({ source: 'heuristic', client: 'openai-sdk' });
    expect(s2?.id).toBe(s1?.id);
    expect(s3?.id).not.toBe(s1?.id);
    const summary = (await sessionsNow()).find((s) => s.id === s1!.id);
    expect(summary).toMatchObject({ turns: 2, requests: 2, models: ['gpt-4o-mini'] });
  });

  it("ties a `loopgate run` process's requests to its run, and refuses a forged run credential", async () => {
    // A run credential counts for a day from its start when the proxy never heard of its run.
    const started = Date.now() - 60_000;
    const credential = runCredential(TOKEN, { tool: 'my-agent', started, nonce: 'abc123' });
    const client = stack.openai(undefined, credential);
    await client.models.list();
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'bye' }] });
    const run = (await sessionsNow()).find((s) => s.id === 'run:my-agent-abc123');
    // The models list counts as a request of the run, not as a turn.
    expect(run).toMatchObject({ source: 'run', requests: 3, turns: 2, run: { tool: 'my-agent' } });
    expect(run!.run!.started).toBe(new Date(started).toISOString());

    const forged = credential.slice(0, -4) + (credential.endsWith('0000') ? '1111' : '0000');
    const otherToken = runCredential('lg-local-another-token-000000000000000', { tool: 'x', started, nonce: 'abcd' });
    for (const bad of [forged, otherToken]) {
      const res = await fetch(`${stack.proxy.url}/v1/models`, { headers: { authorization: `Bearer ${bad}` } });
      expect(res.status).toBe(401);
      expect(res.headers.get('x-loopgate-diagnosis')).toBe('wrong-local-token');
    }
  });

  it('gives a models list that names no session none, and says what is wrong with a bad query or id', async () => {
    const before = logRecords(stack.logFile).length;
    await stack.openai().models.list();
    const last = (await logUntil((all) => all.length > before)).at(-1);
    expect(last).toMatchObject({ canonicalPath: '/v1/models' });
    expect(last!.session).toBeUndefined();
    const bad = await fetch(`${stack.proxy.url}/_loopgate/sessions?limit=lots`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(bad.status).toBe(400);
    const missing = await api()
      .session('claude-code:nope')
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: 'unknown-session' });
    const noToken = await fetch(`${stack.proxy.url}/_loopgate/sessions`);
    expect(noToken.status).toBe(401);
    expect((await api().sessions({ limit: 1 })).sessions).toHaveLength(1);
  });

  it('writes the session to the log, and no credential into any session answer (canary)', async () => {
    const withSession = (await logUntil((all) => all.filter((r) => r.session).length >= 8)).filter((r) => r.session);
    expect(withSession.length).toBeGreaterThanOrEqual(8);
    const everything = JSON.stringify(await sessionsNow());
    const details = await Promise.all((await sessionsNow()).map((s) => api().session(s.id)));
    for (const text of [everything, JSON.stringify(details), readFileSync(stack.logFile, 'utf8')]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(KEYS.claude);
      expect(text).not.toContain(KEYS.default);
      expect(text).not.toMatch(/lg-local-run_[a-z0-9-]+_[0-9a-z]+_[0-9a-z]+_[0-9a-f]{32}/);
    }
  });
});

describe('sessions with capture off', () => {
  it('are still counted (a session cost needs no bodies); the detail has no turns to show', async () => {
    const off = await startStack({ keys: [{ name: 'claude', key: KEYS.claude, named: true }], capture: false });
    try {
      const client = off.anthropic();
      await client.messages.create(
        { model: 'claude-haiku-5-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
        { headers: { 'x-claude-code-session-id': 'capture-off-1' } },
      );
      const offApi = localApi({ url: off.proxy.url, token: TOKEN });
      const [s] = (await offApi.sessions()).sessions;
      expect(s).toMatchObject({ id: 'claude-code:capture-off-1', requests: 1 });
      expect(s).not.toHaveProperty('seqs');
      const detail = await offApi.session(s!.id);
      expect(detail.turns).toEqual([]);
      expect(detail.seqs).toEqual([]);
    } finally {
      await off.close();
    }
  });
});

const isChat = (r: TrafficRecord) => r.canonicalPath === '/v1/chat/completions';

/** The log is written after the answer: poll it until `ready`, with a deadline. */
async function logUntil(ready: (all: TrafficRecord[]) => boolean): Promise<TrafficRecord[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const all = logRecords(stack.logFile);
    if (ready(all)) return all;
    if (Date.now() > deadline) throw new Error(`the log did not get there in 15 s (${all.length} records)`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
