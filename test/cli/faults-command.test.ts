// `loopgate faults` as a user runs it (the commands in-process, on real sockets): `serve` in front of the
// simulator, a rule armed with `faults arm`, the official openai SDK retrying a
// 429 as it does, then `faults` (text and --json) saying what it did, and
// `faults clear`. Mistakes (a rule that does not parse, a stray subcommand, no
// proxy running) are said clearly with their exit codes; outside text (a model
// name, a rule as typed) reaches the terminal escaped; no key or token printed.
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { FaultsAnswer } from '../../core/local-api.js';
import { KEYS } from '../proxy/stack.js';
import { CHAT_429_RETRIED_ONCE_HONOURED } from '../kit/fault-verdicts.js';
import { freePort, runCli } from './io.js';
import { serveOnSimulatorForFile } from './serve-run.js';

const served = serveOnSimulatorForFile({ env: { LOOPGATE_API_KEY: KEYS.default } });
const env = { LOOPGATE_HOME: served.home };
const faults = (...args: string[]) => runCli(['faults', ...args, '--port', String(served.port)], env);

function noSecrets(text: string): void {
  for (const s of [KEYS.default, served.token]) expect(text).not.toContain(s);
}

describe('loopgate faults', () => {
  it('says nothing is armed and nothing injected yet', async () => {
    const r = await faults();
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      /^Armed\n {2}none \(arm one: .* faults arm "429 times=1 retry-after=2"\)\nReport\n {2}no fault injected yet/,
    );
  });

  it('arms a rule, and reports the SDK retrying it after the retry-after, as text and as JSON', async () => {
    const armed = await faults('arm', '429 times=1 retry-after=1 model=gpt-4.1');
    expect(armed.code, armed.err).toBe(0);
    expect(armed.out.trim()).toBe('Armed fault #1: 429 times=1 retry-after=1 model=gpt-4.1 (1 time).');
    const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: served.token, maxRetries: 2 });
    await client.chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'cli fault report' }],
    });
    const deadline = Date.now() + 10_000;
    let answer: FaultsAnswer;
    for (;;) {
      const r = await faults('--json');
      expect(r.code, r.err).toBe(0);
      // One JSON object on one line.
      expect(r.out.trim().split('\n')).toHaveLength(1);
      answer = JSON.parse(r.out) as FaultsAnswer;
      if (answer.report[0]?.succeeded || Date.now() > deadline) break;
    }
    expect(answer.armed).toEqual([
      expect.objectContaining({
        id: 1,
        text: '429 times=1 retry-after=1 model=gpt-4.1',
        source: 'cli',
        injected: 1,
        remaining: 0,
        spent: true,
      }),
    ]);
    expect(answer.report).toHaveLength(1);
    const v = answer.report[0]!;
    expect(v).toMatchObject({
      ...CHAT_429_RETRIED_ONCE_HONOURED,
      fault: { ...CHAT_429_RETRIED_ONCE_HONOURED.fault, ruleId: 1 },
      tokensSpent: { input: 0, output: 0 },
    });
    expect(v.firstWaitMs).toBeGreaterThanOrEqual(950);
    const text = await faults();
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain('  #1  429 times=1 retry-after=1 model=gpt-4.1  (cli; matched 1, injected 1, spent)');
    expect(text.out).toContain(
      `  ${v.time.slice(11, 19)}  ${v.id.slice(0, 8)}  429 (rule #1)  /v1/chat/completions gpt-4.1`,
    );
    expect(text.out).toMatch(/\n {4}retried once after 1\.\d\d s \(retry-after 1 s: honoured\), then succeeded$/m);
    noSecrets(text.out + text.err + JSON.stringify(answer));
  });

  it('escapes outside text: a model name and a rule as typed reach the terminal inert', async () => {
    const armed = await faults('arm', '500 times=1 session=\x1b[2J');
    expect(armed.code, armed.err).toBe(0);
    expect(armed.out).not.toContain('\x1b');
    expect(armed.out).toContain('session=\\x1b[2J');
    const ruled = await faults('arm', '500 times=1 model=evil*');
    expect(ruled.code, ruled.err).toBe(0);
    const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: served.token, maxRetries: 0 });
    await expect(
      client.chat.completions.create({ model: 'evil\x1b]0;pwned\x07', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toThrow();
    const text = await faults();
    expect(text.out).toContain('500 (rule #3)  /v1/chat/completions evil\\x1b]0;pwned\\x07');
    expect(text.out).not.toMatch(/[\x1b\x07]/);
  });

  it('clears one rule by its id, then every rule; an unknown id is said', async () => {
    const one = await faults('clear', '2');
    expect(one.code, one.err).toBe(0);
    expect(one.out.trim()).toBe('Disarmed 1 fault rule.');
    const unknown = await faults('clear', '#99');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^loopgate faults: .*99/);
    const all = await faults('clear');
    expect(all.code, all.err).toBe(0);
    expect(all.out.trim()).toMatch(/^Disarmed \d+ fault rules?\.$/);
    const json = JSON.parse((await faults('--json')).out) as FaultsAnswer;
    expect(json.armed).toEqual([]);
    // The report stays: it is about requests in the ring, not the rules.
    expect(json.report.length).toBeGreaterThanOrEqual(2);
  });

  it('says what is wrong with the command line, before asking any proxy', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['arm', '418'], /A fault starts with its kind, one of 429, 529/],
      [
        ['arm', '429 model=claude-* model=gpt-*'],
        /model is given twice in one fault \("model=claude-\*" and "model=gpt-\*"\)/,
      ],
      [['arm'], /faults arm takes one rule, quoted/],
      [['arm', '429', 'times=2'], /faults arm takes one rule, quoted/],
      [['arm', '429', '--times', 'x'], /--times takes a whole number from 1/],
      [['--times', '2'], /--times goes with `faults arm "RULE"`/],
      [['frob'], /unknown subcommand "frob"/],
      [['clear', 'all'], /faults clear takes a rule's number/],
      [['--jsn'], /unknown option --jsn\. Did you mean --json\?/],
    ];
    for (const [args, problem] of cases) {
      const r = await runCli(['faults', ...args, '--port', '1'], env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toMatch(problem);
    }
    const help = await runCli(['faults', '--help'], env);
    expect(help.code).toBe(0);
    expect(help.out).toContain('loopgate faults arm "RULE" [--times N]');
  });

  it('says when no proxy answers', async () => {
    const free = await freePort();
    const r = await runCli(['faults', '--port', String(free)], env);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(
      /^loopgate faults: no Loopgate proxy answers on http:\/\/127\.0\.0\.1:\d+ .*`loopgate serve`/,
    );
  });
});
