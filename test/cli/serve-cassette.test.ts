// `loopgate serve --record DIR` then `loopgate serve --replay DIR` (issue 34 §1),
// the built CLI with the real openai SDK: the demo session replayed with nothing
// behind the proxy, a miss said on the console, and every bad flag refused.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { exited, runCli, spawnCli, tempHome } from './io.js';

const TOKEN = 'lg-local-cassette-cli-0123456789abcdefghij';

async function serve(args: string[]) {
  const started = await spawnCli(
    ['serve', '--port', '0', '--no-log', ...args],
    { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN },
    /listening on (http:\/\/127\.0\.0\.1:\d+)/,
  );
  const url = started.match[1]!;
  return {
    ...started,
    client: new OpenAI({ baseURL: `${url}/v1`, apiKey: TOKEN, maxRetries: 0 }),
    async stop() {
      started.child.kill('SIGTERM');
      await exited(started.child);
    },
  };
}

describe('serve --record / --replay', () => {
  it('records a demo session and replays it with no upstream, saying a miss on the console', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'lg-cli-cassette-')), 'cassette');
    const ask = (c: OpenAI, text: string) =>
      c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });
    const recording = await serve(['--record', dir]);
    let first: string;
    try {
      first = (await ask(recording.client, 'record me')).choices[0]!.message.content!;
    } finally {
      await recording.stop();
    }
    expect(readdirSync(dir).some((f) => f.includes('-POST-v1-chat-completions-'))).toBe(true);

    const replaying = await serve(['--replay', dir, '--replay-speed', '0']);
    try {
      expect(replaying.lines.join('\n')).toMatch(/upstream\s+cassette .* exchanges, speed 0\): nothing is sent/);
      expect((await ask(replaying.client, 'record me')).choices[0]!.message.content).toBe(first);
      await expect(ask(replaying.client, 'something new')).rejects.toThrow(/no recording matches/);
      const deadline = Date.now() + 5000;
      while (!replaying.lines.some((l) => /hint: .*no recording matches/.test(l)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(replaying.lines.join('\n')).toMatch(
        /hint: .*messages\.0\.content: recorded "record me", sent "something new"/,
      );
    } finally {
      await replaying.stop();
    }
  });

  it('refuses what cannot work, saying what to do', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'lg-cli-cassette-'));
    const cases: Array<[string[], RegExp]> = [
      [['--replay', empty, '--upstream', 'https://example.com'], /leave out --upstream/],
      [['--replay', empty, '--record', empty], /record into another directory/],
      [['--replay-speed', '2'], /goes with --replay DIR/],
      [['--replay', empty, '--replay-speed', 'fast'], /--replay-speed takes a number/],
      [['--record', empty, '--no-capture'], /leave out --no-capture/],
      [['--replay', empty, '--port', '0'], /the cassette has no exchanges/],
      [['--replay', join(empty, 'nope'), '--port', '0'], /no such directory/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(['serve', '--no-log', ...args], { LOOPGATE_TOKEN: TOKEN });
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.err, args.join(' ')).toMatch(message);
    }
  });
});
