// `loopgate serve --fault RULE` and loopgate.json "faults" (issue 34 §2), the
// built CLI in demo mode (the embedded simulator) with the real SDKs: the rules
// armed at start are listed, injected and said on the console; a bad rule stops
// the start with what to fix.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { exited, runCli, spawnCli, tempHome } from './io.js';

const TOKEN = 'lg-local-fault-cli-0123456789abcdefghijklm';

async function serve(args: string[], cwd?: string) {
  const started = await spawnCli(
    ['serve', '--port', '0', '--no-log', ...args],
    { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN },
    /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    { cwd },
  );
  const url = started.match[1]!;
  return {
    ...started,
    openai: new OpenAI({ baseURL: `${url}/v1`, apiKey: TOKEN, maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: url, apiKey: TOKEN, maxRetries: 0 }),
    async stop() {
      started.child.kill('SIGTERM');
      await exited(started.child);
    },
  };
}

async function waitForLine(lines: string[], re: RegExp): Promise<string> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const hit = lines.find((l) => re.test(l));
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`no line ${re} in:\n${lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('serve --fault', () => {
  it('arms each rule in order, injects it into the demo traffic and says so on the console', async () => {
    const s = await serve(['--fault', '429 times=1 retry-after=2 protocol=messages', '--fault', '503 protocol=chat']);
    try {
      await waitForLine(s.lines, /fault\s+rule 1: 429 times=1 retry-after=2 protocol=messages \(cli\)/);
      await waitForLine(s.lines, /fault\s+rule 2: 503 protocol=chat \(cli\)/);
      const ask = () =>
        s.anthropic.messages.create({
          model: 'claude-haiku-5-5',
          max_tokens: 16,
          messages: [{ role: 'user', content: 'hi' }],
        });
      const err = (await ask().catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
      expect(err).toBeInstanceOf(Anthropic.RateLimitError);
      expect(err.headers?.get('retry-after')).toBe('2');
      expect(err.headers?.get('x-loopgate-fault')).toBe('429 (rule 1)');
      // times=1: the next one passes.
      expect((await ask()).content.length).toBeGreaterThan(0);
      await expect(
        s.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      ).rejects.toMatchObject({ status: 503 });
      await waitForLine(s.lines, /hint: Fault injected: 429 \(rule 1: .*\) into \/v1\/messages, retry-after 2 s/);
      await waitForLine(s.lines, /hint: Fault injected: 503 \(rule 2: /);
      expect(s.lines.join('\n')).not.toContain(TOKEN);
    } finally {
      await s.stop();
    }
  });

  it('reads "faults" from loopgate.json, before the --fault rules', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lg-fault-project-'));
    writeFileSync(join(dir, 'loopgate.json'), JSON.stringify({ faults: ['500 times=1'] }));
    const s = await serve(['--fault', '502'], dir);
    try {
      await waitForLine(s.lines, /fault\s+rule 1: 500 times=1 \(config\)/);
      const ask = () =>
        s.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      await expect(ask()).rejects.toMatchObject({ status: 500 });
      await expect(ask()).rejects.toMatchObject({ status: 502 });
    } finally {
      await s.stop();
    }
  });

  it('a bad rule stops the start with what to fix: exit 2 for --fault, 3 for loopgate.json', async () => {
    for (const [rule, message] of [
      ['430', /A fault starts with its kind, one of 429/],
      ['429 times=0', /times takes a whole number from 1/],
      ['cut retry-after=2', /retry-after goes with 429, 529 or 503/],
      ['429 color=red', /Unknown fault setting "color"/],
      ['429 model=claude-* model=gpt-*', /model is given twice in one fault/],
      ['429 times=1 times=2', /times is given twice in one fault/],
    ] as const) {
      const r = await runCli(['serve', '--no-log', '--port', '0', '--fault', rule], { LOOPGATE_TOKEN: TOKEN });
      expect(r.code, rule).toBe(2);
      expect(r.err, rule).toMatch(message);
    }
    const dir = mkdtempSync(join(tmpdir(), 'lg-fault-project-'));
    writeFileSync(join(dir, 'loopgate.json'), JSON.stringify({ faults: ['429 times=2', 'stall seconds=0'] }));
    await expect(serve([], dir)).rejects.toThrow(/exited with 3[\s\S]*Fault rule: seconds takes a whole number/);
    writeFileSync(join(dir, 'loopgate.json'), JSON.stringify({ faults: '429' }));
    await expect(serve([], dir)).rejects.toThrow(/exited with 3[\s\S]*"faults" must be an array of fault rules/);
  });
});
