// Cassettes as their users expect (issue 42 items 15, 16, 18), the CLI in-process with the official SDKs: a miss is
// diffed against the recording the same client made, not another client's; `--replay DIR --on-miss record`
// starts from a folder that is empty or not there yet (record once, replay after); `serve --record` keeps the
// proxy's own start-up /models answers, and a replay serves them; the console's miss hint keeps its lines.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { expectReplayAnswers, serve } from './serve-run.js';
import { defaultFixture, startSimulator } from '../../simulator/index.js';
import { assertNoCanary, makeCanary } from '../log/canary.js';

const TOKEN = 'lg-local-cassette-misses-0123456789abcdef';
/** Claude Code 2.1.332's first request, as it sent it in a git repository (see the file's own note). */
const CLAUDE_CODE = JSON.parse(
  readFileSync(join(__dirname, '..', 'fixtures', 'agent-requests', 'claude-code-git-repo-first-request.json'), 'utf8'),
) as { headers: Record<string, string>; body: Record<string, unknown> & { tools: Array<{ description?: string }> } };

/** `serve` in this process (serve-run.ts), with the SDKs' clients on it. */
async function served(args: string[], env: Record<string, string> = {}) {
  const s = await serve(args, { LOOPGATE_TOKEN: TOKEN, ...env });
  return {
    ...s,
    openai: new OpenAI({ baseURL: `${s.url}/v1`, apiKey: TOKEN, maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: s.url, apiKey: TOKEN, maxRetries: 0 }),
    /** Claude Code as the proxy sees it: its User-Agent and its body, through the Anthropic SDK. */
    claudeCode: new Anthropic({
      baseURL: s.url,
      apiKey: TOKEN,
      maxRetries: 0,
      defaultHeaders: { 'user-agent': CLAUDE_CODE.headers['user-agent']! },
    }),
  };
}

const folder = () => join(mkdtempSync(join(tmpdir(), 'lg-cassette-misses-')), 'cassette');
const ask = (c: OpenAI, text: string) =>
  c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });

/** Sends a body as it is (Claude Code's, whole) and returns the answer's status and text. */
async function sendAsIs(client: Anthropic, body: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const res = await client.messages
    .create(body as unknown as Anthropic.MessageCreateParamsNonStreaming, { path: '/v1/messages?beta=true' })
    .asResponse()
    .catch((err: unknown) => {
      if (err instanceof Anthropic.APIError) return new Response(JSON.stringify(err.error), { status: err.status });
      throw err;
    });
  return { status: res.status, text: await res.text() };
}

describe('cassette misses, record-once and the recorded /models', () => {
  it("diffs a miss against the same client's recording, and the console hint keeps its lines", async () => {
    const dir = folder();
    const recording = await served(['--record', dir]);
    try {
      // The Anthropic SDK and Claude Code both record the same route.
      await recording.anthropic.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'say hello' }],
      });
      expect((await sendAsIs(recording.claudeCode, CLAUDE_CODE.body)).status).toBe(200);
    } finally {
      await recording.stop();
    }
    const files = readdirSync(dir).filter((f) => f.includes('-POST-v1-messages-'));
    expect(files).toHaveLength(2);
    // Each recording says which client made it.
    const agents = files.map(
      (f) =>
        (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { request: { headers: Record<string, string> } }).request,
    );
    expect(agents.map((r) => r.headers['user-agent'])).toEqual([
      expect.stringMatching(/^Anthropic\/JS /),
      CLAUDE_CODE.headers['user-agent'],
    ]);

    const replaying = await served(['--replay', dir, '--replay-speed', '0']);
    try {
      // A newer Claude Code rewords every tool's description: twelve differences from its own recording, fewer
      // from the SDK's (whose body has none of Claude Code's fields). Its own is the one to compare with.
      const tools = CLAUDE_CODE.body.tools.map((t) => ({ ...t, description: `${t.description ?? ''} (reworded)` }));
      const miss = await sendAsIs(replaying.claudeCode, { ...CLAUDE_CODE.body, tools });
      expect(miss.status).toBe(400);
      expect(miss.text).toMatch(/The nearest recording of claude-code differs at:\\n {2}tools\.0\.description: /);
      expect(miss.text).not.toMatch(/max_tokens: recorded 200/);
      const said = await replaying.line(/^\s+Record again, or add the path/);
      // The hint on the console: its first line, each differing path on a line of its own, what to do.
      const hint = said.split('\n').findIndex((l) => l.startsWith('hint: Loopgate replay: no recording matches'));
      expect(hint).toBeGreaterThanOrEqual(0);
      const lines = said.split('\n').slice(hint);
      expect(lines[0]).toMatch(/The nearest recording of claude-code differs at:$/);
      // Shown from just before where the two texts part: the change is on screen.
      expect(lines[1]).toMatch(/^ {8}tools\.0\.description: recorded …".*", sent …".* \(reworded\)"$/);
      expect(lines[10]).toMatch(/^ {8}tools\.9\.description: /);
      expect(lines[11]).toMatch(/^ {6}Record again, or add the path to the match's ignore list/);
      expect(said).not.toContain(' | ');
    } finally {
      await replaying.stop();
    }
  });

  it('--replay DIR --on-miss record starts from a folder not there yet, records the misses, replays them after', async () => {
    const dir = folder();
    const once = await served(['--replay', dir, '--replay-speed', '0', '--on-miss', 'record']);
    let first: string;
    try {
      expect(await once.line(/upstream\s+cassette/)).toMatch(
        /upstream\s+cassette .* \(0 exchanges, speed 0\): misses are sent to the embedded simulator and added/,
      );
      first = (await ask(once.openai, 'record me once')).choices[0]!.message.content!;
      expect(first).toBeTruthy();
      // The same request again is answered from what was just recorded.
      expect((await ask(once.openai, 'record me once')).choices[0]!.message.content).toBe(first);
    } finally {
      await once.stop();
    }
    expect(readdirSync(dir).filter((f) => f.includes('chat-completions'))).toHaveLength(1);
    await expectReplayAnswers(dir, TOKEN, 'record me once', first);
  });

  it('--replay DIR --on-miss record starts from an empty folder too; without --on-miss record it says what to do', async () => {
    const dir = folder();
    mkdirSync(dir);
    const once = await served(['--replay', dir, '--replay-speed', '0', '--on-miss', 'record']);
    try {
      expect((await ask(once.openai, 'into an empty folder')).choices[0]!.message.content).toBeTruthy();
    } finally {
      await once.stop();
    }
    expect(readdirSync(dir).filter((f) => f.includes('chat-completions'))).toHaveLength(1);
    const empty = folder();
    mkdirSync(empty);
    const refused = serve(['--replay', empty], { LOOPGATE_TOKEN: TOKEN });
    await expect(refused).rejects.toThrow(
      /exited with 3[\s\S]*the cassette has no exchanges\. .*add `--on-miss record`/,
    );
  });

  it("serve --record keeps the proxy's own /models answers (no key in them), and the replay lists them", async () => {
    const key = makeCanary('sk-canary-models-');
    const sim = await startSimulator({
      port: 0,
      fixture: { ...defaultFixture, keys: [{ key, group: 'default', status: 'active', balance: 1000 }] },
    });
    const dir = folder();
    try {
      const recording = await served(['--record', dir, '--upstream', sim.baseUrl, '--allow-http'], {
        LOOPGATE_API_KEY: key,
      });
      try {
        await ask(recording.openai, 'one request');
      } finally {
        await recording.stop();
      }
    } finally {
      await sim.close();
    }
    const lists = readdirSync(dir).filter((f) => /^\d{4}-GET-v1-models-/.test(f));
    expect(lists.length).toBeGreaterThanOrEqual(1);
    const recorded = JSON.parse(readFileSync(join(dir, lists[0]!), 'utf8')) as {
      request: { method: string; path: string };
      response: { status: number; body: { data: Array<{ id: string }> } };
    };
    expect(recorded.request).toMatchObject({ method: 'GET', path: '/v1/models' });
    expect(recorded.response.status).toBe(200);
    const ids = recorded.response.body.data.map((m) => m.id);
    // The whole list the upstream gave, not only the model the request used.
    expect(ids.length).toBeGreaterThan(1);
    for (const f of readdirSync(dir)) assertNoCanary(readFileSync(join(dir, f), 'utf8'), [key, TOKEN]);

    const replaying = await served(['--replay', dir, '--replay-speed', '0']);
    try {
      const listed = await replaying.openai.models.list();
      expect(listed.data.map((m) => m.id)).toEqual(ids);
    } finally {
      await replaying.stop();
    }
  });
});
