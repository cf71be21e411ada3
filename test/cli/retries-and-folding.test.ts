// Two of issue 42's item 18, the built CLI in front of the demo simulator with the official SDKs: a session's
// `retries` agrees with what `loopgate faults` says the client did after an injected 429 (it said "retries: 0"
// beside "retried twice"), in `sessions --json` and in `show`'s session section; and `show` folds a long
// system prompt to its first lines and how much more there is, with `--full` for the whole.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import type { FaultsAnswer } from '../../core/local-api.js';
import { exited, runCli, spawnCli, tempHome } from './io.js';

const TOKEN = 'lg-local-retries-folding-0123456789abcdef';
const env = { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN };
let child: ChildProcess;
let url: string;
const cli = (...args: string[]) => runCli([...args, '--proxy', url], env);

beforeAll(async () => {
  const started = await spawnCli(
    ['serve', '--port', '0', '--no-log', '--fault', '429 times=2 retry-after=1 model=gpt-4.1'],
    env,
    /listening on (http:\/\/127\.0\.0\.1:\d+)/,
  );
  child = started.child;
  url = started.match[1]!;
});
afterAll(async () => {
  child.kill('SIGTERM');
  await exited(child);
});

describe('session retries and show folding', () => {
  it("a session's retries are the client's retries of an injected fault, as `faults` counts them", async () => {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: TOKEN, maxRetries: 2 });
    const { response } = await client.chat.completions
      .create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'retry me twice' }] })
      .withResponse();
    const id = response.headers.get('x-loopgate-request-id')!;
    const deadline = Date.now() + 10_000;
    let report: FaultsAnswer['report'] = [];
    while (!report[0]?.succeeded && Date.now() < deadline)
      report = (JSON.parse((await cli('faults', '--json')).out) as FaultsAnswer).report;
    // Two faults (the first request and its first retry), one chain: the first says "retried twice".
    expect(report).toHaveLength(2);
    expect(report[0]).toMatchObject({ retries: 2, succeeded: true });
    expect((await cli('faults')).out).toMatch(/retried twice, first after/);

    const sessions = (await cli('sessions', '--json')).out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; retries: number });
    const session = sessions.find((s) => s.id === report[0]!.session)!;
    expect(session).toBeDefined();
    expect(session.retries).toBe(2);
    // The request that succeeded, as `show` prints its session.
    const shown = await cli('show', id);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toMatch(/, 2 errors, 2 retries, over /);
  });

  it('show folds a system prompt over 2 KB to its first lines; --full prints it whole', async () => {
    const lines = Array.from({ length: 400 }, (_, i) => `Rule ${i + 1}: keep the answer short and exact.`);
    const system = lines.join('\n');
    const anthropic = new Anthropic({ baseURL: url, apiKey: TOKEN, maxRetries: 0 });
    const { response } = await anthropic.messages
      .create({ model: 'claude-sonnet-4-6', max_tokens: 64, system, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const id = response.headers.get('x-loopgate-request-id')!;

    const folded = await cli('show', id);
    expect(folded.code, folded.err).toBe(0);
    expect(folded.out).toContain('  system: Rule 1: keep the answer short and exact.');
    expect(folded.out).toContain('Rule 8: keep');
    expect(folded.out).not.toContain('Rule 9: keep');
    expect(folded.out).not.toContain('Rule 400: keep');
    const shownChars = lines.slice(0, 8).join('\n').length;
    const more = (system.length - shownChars).toLocaleString('en-US');
    expect(folded.out).toMatch(new RegExp(`^ {10}… ${more} more characters, --full to see all$`, 'm'));
    // The conversation goes on after the fold.
    expect(folded.out).toMatch(/system: Rule 1[\s\S]*… [\d,]+ more characters[\s\S]*\n {2}user: hi\n/);

    const full = await cli('show', id, '--full');
    expect(full.code, full.err).toBe(0);
    expect(full.out).toContain('Rule 400: keep the answer short and exact.');
    expect(full.out).not.toContain('more characters, --full');
  });
});
