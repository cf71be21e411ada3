// What an agent writes about its surroundings does not stop a replay (issue 42 item 17): Claude Code's gitStatus
// snapshot, working directory and memory folder, Codex's <environment_context> working directory, workspace
// roots and time zone. The requests are the real agents' (Claude Code 2.1.332 run in a git repository, Codex
// 0.171 from the agent tape), rebuilt around a real git repository: recorded with `serve --record` into the
// repository, the cassette committed, then replayed from a clone in another folder, so the status, the recent
// commits and the working directory all differ. Through the built CLI and the official SDKs. (The same with the
// real Claude Code binary is in test/agents/cassettes.live.test.ts.)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { exited, spawnCli, tempHome } from './io.js';

const TOKEN = 'lg-local-cassette-agent-blocks-0123456789';
const FIXTURES = join(__dirname, '..', 'fixtures', 'agent-cassettes');
const CLAUDE_CODE = JSON.parse(
  readFileSync(join(__dirname, '..', 'fixtures', 'agent-requests', 'claude-code-git-repo-first-request.json'), 'utf8'),
) as {
  headers: Record<string, string>;
  body: Record<string, unknown>;
};
const CODEX = JSON.parse(
  readFileSync(join(FIXTURES, 'agents', 'default', '0002-POST-v1-responses-a7ee6f7f47a82c52.json'), 'utf8'),
) as { request: { body: Record<string, unknown> } };
/** Where the agents ran when their requests were captured. */
const CLAUDE_CWD = '/tmp/h42c/repo';
const CODEX_CWD = '/tmp/loopgate-agents-YGPq6f';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  }).trim();
}

/** Every string in a value with `edit` applied. */
function mapStrings(v: unknown, edit: (s: string) => string): unknown {
  if (typeof v === 'string') return edit(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, edit));
  if (typeof v === 'object' && v !== null)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapStrings(x, edit)]));
  return v;
}

/** Claude Code's request as it would send it in `repo` now: that folder, and the repository's status as it writes it. */
function claudeCodeIn(repo: string): Record<string, unknown> {
  const status = git(repo, 'status', '--porcelain') || '(clean)';
  const snapshot =
    `# gitStatus\nThis is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.\n\n` +
    `Current branch: ${git(repo, 'branch', '--show-current')}\n\nMain branch (you will usually use this for PRs): main\n\n` +
    `Git user: t\n\nStatus:\n${status}\n\nRecent commits:\n${git(repo, 'log', '--oneline', '-5')}`;
  const slug = (p: string) => p.replace(/[^A-Za-z0-9]/g, '-');
  return mapStrings(CLAUDE_CODE.body, (s) =>
    s
      .replace(/# gitStatus\n[\s\S]*?(?=\n\nClaude Code attached this context)/, snapshot)
      .replaceAll(CLAUDE_CWD, repo)
      .replaceAll(slug(CLAUDE_CWD), slug(repo)),
  ) as Record<string, unknown>;
}

/** Codex's request as it would send it in `folder`, in another time zone. */
function codexIn(folder: string, zone: string): Record<string, unknown> {
  return mapStrings(CODEX.request.body, (s) =>
    s.replaceAll(CODEX_CWD, folder).replace(/<timezone>[^<]*<\/timezone>/, `<timezone>${zone}</timezone>`),
  ) as Record<string, unknown>;
}

async function serve(args: string[], cwd: string) {
  const started = await spawnCli(
    ['serve', '--port', '0', '--no-log', ...args],
    { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN },
    /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    cwd,
  );
  const url = started.match[1]!;
  const claudeCode = new Anthropic({
    baseURL: url,
    apiKey: TOKEN,
    maxRetries: 0,
    defaultHeaders: { 'user-agent': CLAUDE_CODE.headers['user-agent']! },
  });
  const codex = new OpenAI({
    baseURL: `${url}/v1`,
    apiKey: TOKEN,
    maxRetries: 0,
    defaultHeaders: { 'user-agent': 'codex_exec/0.171.0', originator: 'codex_exec' },
  });
  return {
    /** Both agents' requests, each answer's text (or the error's, for a miss). */
    async ask(claudeBody: Record<string, unknown>, codexBody: Record<string, unknown>): Promise<[string, string]> {
      const text = (p: { asResponse(): Promise<Response> }) =>
        p.asResponse().then(
          (r) => r.text(),
          (err: unknown) => `${(err as Error).message}`,
        );
      return [
        await text(
          claudeCode.messages.create(claudeBody as unknown as Anthropic.MessageCreateParamsNonStreaming, {
            path: '/v1/messages?beta=true',
          }),
        ),
        await text(codex.responses.create(codexBody as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming)),
      ];
    },
    async stop() {
      started.child.kill('SIGTERM');
      await exited(started.child);
    },
  };
}

describe("agents' volatile blocks in a cassette", () => {
  it('Claude Code and Codex replay in a clone of the repository after a commit, in another folder', async () => {
    const repo = realpathSync(mkdtempSync(join(tmpdir(), 'lg-agent-repo-')));
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'start');
    const recording = await serve(['--record', 'cassettes/agents'], repo);
    let recorded: [string, string];
    try {
      recorded = await recording.ask(claudeCodeIn(repo), codexIn(repo, 'Etc/UTC'));
    } finally {
      await recording.stop();
    }
    expect(recorded[0]).toMatch(/event: message_stop/);
    expect(recorded[1]).toMatch(/response\.completed/);
    // The cassette committed: the status and the recent commits are now another snapshot.
    git(repo, 'add', 'cassettes');
    git(repo, 'commit', '-q', '-m', 'record the agents');
    const clone = realpathSync(mkdtempSync(join(tmpdir(), 'lg-agent-clone-')));
    git(clone, 'clone', '-q', repo, '.');
    const claudeThen = claudeCodeIn(clone);
    expect(JSON.stringify(claudeThen)).toContain('record the agents');
    expect(JSON.stringify(claudeThen)).not.toContain(repo);

    const replaying = await serve(['--replay', 'cassettes/agents', '--replay-speed', '0'], clone);
    try {
      const replayed = await replaying.ask(claudeThen, codexIn(clone, 'Europe/Paris'));
      expect(replayed[0]).toBe(recorded[0]);
      expect(replayed[1]).toBe(recorded[1]);
    } finally {
      await replaying.stop();
    }
  });
});
