// `loopgate serve --record DIR` then `loopgate serve --replay DIR` (issue 34 §1),
// the CLI in-process on real sockets with the real openai SDK: the demo session replayed with nothing
// behind the proxy, a miss said on the console, and every bad flag refused.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { runCli, tempHome } from './io.js';
import { expectReplayAnswers, serve } from './serve-run.js';
import { defaultFixture, startSimulator } from '../../simulator/index.js';
import { assertNoCanary, makeCanary } from '../log/canary.js';

const TOKEN = 'lg-local-cassette-cli-0123456789abcdefghij';

/** `serve` in this process (serve-run.ts), with an openai client on it. */
async function served(args: string[], cwd?: string, env: Record<string, string> = {}) {
  const s = await serve(args, { LOOPGATE_TOKEN: TOKEN, ...env }, { cwd });
  return { ...s, client: new OpenAI({ baseURL: `${s.url}/v1`, apiKey: TOKEN, maxRetries: 0 }) };
}

/** A cassette folder not made yet, in a temporary folder of its own. */
const freshCassetteDir = () => join(mkdtempSync(join(tmpdir(), 'lg-cli-cassette-')), 'cassette');

/** One chat question to gpt-4o-mini. */
const ask = (c: OpenAI, text: string) =>
  c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });

describe('serve --record / --replay', () => {
  it('a cassette file that cannot be written is said once, and the proxy stays up and answers', async () => {
    // The cassette folder's parent is a file: every write fails with ENOTDIR (a full disk or EACCES alike).
    const parent = join(mkdtempSync(join(tmpdir(), 'lg-cassette-')), 'a-file');
    writeFileSync(parent, 'not a folder');
    const s = await served(['--record', join(parent, 'cassette')]);
    try {
      for (const text of ['one', 'two']) {
        const answer = await s.client.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: text }],
        });
        expect(answer.choices[0]!.message.content).toBeTruthy();
      }
      expect(await s.line(/--record: cannot write/)).toMatch(/--record: cannot write into .* \(ENOTDIR\)/);
      expect(s.running()).toBe(true);
    } finally {
      await s.stop();
    }
  });

  it('records a demo session and replays it with no upstream, saying a miss on the console', async () => {
    const dir = freshCassetteDir();
    const recording = await served(['--record', dir]);
    let first: string;
    try {
      first = (await ask(recording.client, 'record me')).choices[0]!.message.content!;
    } finally {
      await recording.stop();
    }
    expect(readdirSync(dir).some((f) => f.includes('-POST-v1-chat-completions-'))).toBe(true);

    const replaying = await served(['--replay', dir, '--replay-speed', '0']);
    try {
      // The banner's lines come after the ready line: waited for, not read at once.
      expect(await replaying.line(/upstream\s+cassette/)).toMatch(
        /upstream\s+cassette .* exchanges, speed 0\): nothing is sent/,
      );
      expect((await ask(replaying.client, 'record me')).choices[0]!.message.content).toBe(first);
      await expect(ask(replaying.client, 'something new')).rejects.toThrow(/no recording matches/);
      const deadline = Date.now() + 5000;
      while (!replaying.lines.some((l) => /hint: .*no recording matches/.test(l)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(replaying.lines.join('\n')).toMatch(
        /hint: .*no recording matches.*\n {8}messages\.0\.content: recorded "record me", sent "something new"\n/,
      );
      // The request line names it, and tail shows where it first differs; so does the record (show --json).
      expect(await replaying.line(/\[cassette-miss\]/)).toMatch(
        /POST \/v1\/chat\/completions 400 .*\[cassette-miss\] No recording in the cassette matches/,
      );
      const env = { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN };
      const tail = await runCli(['tail', '--no-follow', '--proxy', replaying.url], env);
      expect(tail.out).toMatch(
        /POST \/v1\/chat\/completions 400 .*\[cassette-miss\] first difference at messages\.0\.content/,
      );
      const json = await runCli(['tail', '--no-follow', '--json', '--errors', '--proxy', replaying.url], env);
      const rec = JSON.parse(json.out.trim().split('\n').at(-1)!) as Record<string, unknown>;
      expect(rec).toMatchObject({
        errorCode: 'cassette_miss',
        diagnosis: 'cassette-miss',
        cassetteMiss: 'messages.0.content',
      });
    } finally {
      await replaying.stop();
    }
  });

  it('--on-miss record sends a miss on, adds it to the cassette, and answers it from there after', async () => {
    const dir = freshCassetteDir();
    const recording = await served(['--record', dir]);
    try {
      await ask(recording.client, 'first');
    } finally {
      await recording.stop();
    }
    const before = readdirSync(dir).filter((f) => f.includes('chat-completions'));
    // The proxy's own /models answers were recorded too (one a demo key): the next number is after all of them.
    const next = String(readdirSync(dir).length + 1).padStart(4, '0');
    const hybrid = await served(['--replay', dir, '--replay-speed', '0', '--on-miss', 'record']);
    let added: string;
    try {
      const sentTo = /misses are sent to the embedded simulator and added to the cassette/;
      expect(await hybrid.line(sentTo)).toMatch(sentTo);
      added = (await ask(hybrid.client, 'second')).choices[0]!.message.content!;
      expect(added).toBeTruthy();
      // The second time it is a replay (nothing new is written).
      expect((await ask(hybrid.client, 'second')).choices[0]!.message.content).toBe(added);
    } finally {
      await hybrid.stop();
    }
    const after = readdirSync(dir).filter((f) => f.includes('chat-completions'));
    expect(after.length).toBe(before.length + 1);
    // Numbered after what was there: nothing overwritten, the listing reads in order.
    expect(after.filter((f) => !before.includes(f))[0]).toMatch(new RegExp(`^${next}-POST-v1-chat-completions-`));

    await expectReplayAnswers(dir, TOKEN, 'second', added);
  });

  it('--on-miss record with --upstream sends misses there with the real key, which no cassette file holds', async () => {
    const key = makeCanary('sk-canary-onmiss-');
    const sim = await startSimulator({
      port: 0,
      fixture: { ...defaultFixture, keys: [{ key, group: 'default', status: 'active', balance: 1000 }] },
    });
    const dir = freshCassetteDir();
    try {
      const recording = await served(['--record', dir, '--upstream', sim.baseUrl, '--allow-http'], undefined, {
        LOOPGATE_API_KEY: key,
      });
      try {
        await recording.client.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'first' }],
        });
      } finally {
        await recording.stop();
      }
      const upstream = ['--upstream', sim.baseUrl, '--allow-http'];
      const hybrid = await served(
        ['--replay', dir, '--replay-speed', '0', '--on-miss', 'record', ...upstream],
        undefined,
        {
          LOOPGATE_API_KEY: key,
        },
      );
      try {
        expect(await hybrid.line(/misses are sent to/)).toMatch(
          /misses are sent to http:\/\/127\.0\.0\.1:\d+ and added/,
        );
        const r = await hybrid.client.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: `second, with a key in it: ${key}` }],
        });
        expect(r.choices[0]!.message.content).toContain('second');
      } finally {
        await hybrid.stop();
      }
      const files = readdirSync(dir).filter((f) => f.includes('chat-completions'));
      expect(files).toHaveLength(2);
      for (const f of readdirSync(dir)) assertNoCanary(readFileSync(join(dir, f), 'utf8'), [key, TOKEN]);
    } finally {
      await sim.close();
    }
  });

  it('--on-miss simulate answers misses from the simulator and records nothing', async () => {
    const dir = freshCassetteDir();
    const recording = await served(['--record', dir]);
    try {
      await recording.client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'seed' }],
      });
    } finally {
      await recording.stop();
    }
    const files = readdirSync(dir);
    const seeded = await served(['--replay', dir, '--replay-speed', '0', '--on-miss', 'simulate']);
    try {
      expect(await seeded.line(/misses are answered/)).toMatch(/misses are answered by the embedded simulator/);
      const r = await seeded.client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'beyond the cassette' }],
      });
      expect(r.choices[0]!.message.content).toBeTruthy();
    } finally {
      await seeded.stop();
    }
    expect(readdirSync(dir)).toEqual(files);
  });

  it('--on-miss simulate replays models the demo does not have, and a demo family still answers a new request', async () => {
    // Recorded against an upstream whose group has models the demo fixture lacks (a real service's, say): one of
    // no demo family, one newer than the demo's of its family.
    const key = makeCanary('sk-canary-seed-');
    const [unknown, newer] = ['acme-large-1', 'gpt-6.2-sol'];
    const groups = {
      ...defaultFixture.groups,
      default: {
        ...defaultFixture.groups.default!,
        models: [...defaultFixture.groups.default!.models, unknown, newer],
      },
    };
    const sim = await startSimulator({
      port: 0,
      fixture: { groups, keys: [{ key, group: 'default', status: 'active', balance: 1000 }] },
    });
    const dir = freshCassetteDir();
    const askModel = (c: OpenAI, m: string, text: string) =>
      c.chat.completions.create({ model: m, messages: [{ role: 'user', content: text }] });
    const recorded: Record<string, string> = {};
    try {
      const recording = await served(['--record', dir, '--upstream', sim.baseUrl, '--allow-http'], undefined, {
        LOOPGATE_API_KEY: key,
      });
      try {
        for (const m of [unknown, newer])
          recorded[m] = (await askModel(recording.client, m, 'from the real service')).choices[0]!.message.content!;
      } finally {
        await recording.stop();
      }
    } finally {
      await sim.close();
    }
    const seeded = await served(['--replay', dir, '--replay-speed', '0', '--on-miss', 'simulate']);
    try {
      for (const m of [unknown, newer])
        expect((await askModel(seeded.client, m, 'from the real service')).choices[0]!.message.content).toBe(
          recorded[m],
        );
      // Only the model of no demo family joins the lists: the newer one is the demo family's, as before.
      const listed = (await seeded.client.models.list()).data.map((m) => m.id);
      expect(listed).toContain(unknown);
      expect(listed).not.toContain(newer);
      // Beyond the cassette: the demo's own models, and the newer model served as its family's closest.
      expect((await askModel(seeded.client, 'gpt-4o-mini', 'beyond it')).choices[0]!.message.content).toBeTruthy();
      expect((await askModel(seeded.client, newer, 'beyond it too')).choices[0]!.message.content).toBeTruthy();
    } finally {
      await seeded.stop();
    }
    for (const f of readdirSync(dir)) assertNoCanary(readFileSync(join(dir, f), 'utf8'), [key, TOKEN]);
  });

  it('match ignore paths from --match-ignore and loopgate.json turn a miss into a hit', async () => {
    const project = mkdtempSync(join(tmpdir(), 'lg-cli-cassette-'));
    const dir = join(project, 'cassette');
    const askSampled = (c: OpenAI, temperature: number, seed: number) =>
      c.chat.completions.create({
        model: 'gpt-4o-mini',
        temperature,
        seed,
        messages: [{ role: 'user', content: 'same' }],
      });
    const recording = await served(['--record', dir]);
    let first: string;
    try {
      first = (await askSampled(recording.client, 0.5, 1)).choices[0]!.message.content!;
    } finally {
      await recording.stop();
    }
    // Without the ignore paths a changed temperature and seed miss.
    const strict = await served(['--replay', dir, '--replay-speed', '0'], project);
    try {
      await expect(askSampled(strict.client, 0.9, 2)).rejects.toThrow(/temperature: recorded 0.5, sent 0.9/);
    } finally {
      await strict.stop();
    }
    writeFileSync(join(project, 'loopgate.json'), JSON.stringify({ cassette: { ignore: ['seed'] } }));
    const lenient = await served(['--replay', dir, '--replay-speed', '0', '--match-ignore', 'temperature'], project);
    try {
      expect((await askSampled(lenient.client, 0.9, 2)).choices[0]!.message.content).toBe(first);
    } finally {
      await lenient.stop();
    }
  });

  it('show ID --save DIR adds a request of a running proxy to a cassette, which then replays it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'lg-cli-cassette-')), 'fixtures');
    const env = { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN };
    const live = await served([]);
    let answer: string;
    try {
      const { data, response } = await live.client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'keep this one' }] })
        .withResponse();
      answer = data.choices[0]!.message.content!;
      const id = response.headers.get('x-loopgate-request-id')!;
      const first = await runCli(['show', id, '--save', dir, '--proxy', live.url], env);
      expect(first.code, first.err).toBe(0);
      expect(first.out).toMatch(/^saved .*fixtures\/0001-POST-v1-chat-completions-[0-9a-f]{16}\.json$/m);
      // Saved again: a new file after it, never over it.
      const again = await runCli(['show', id, '--save', dir, '--proxy', live.url], env);
      expect(again.out).toMatch(/fixtures\/0002-POST-v1-chat-completions-/);
      const bad = await runCli(['show', id, '--save', dir, '--json', '--proxy', live.url], env);
      expect(bad.code).toBe(2);
      expect(bad.err).toMatch(/--save writes the exchange into a cassette: leave out --json/);
    } finally {
      await live.stop();
    }
    expect(readdirSync(dir)).toHaveLength(2);
    const replaying = await served(['--replay', dir, '--replay-speed', '0']);
    try {
      const r = await replaying.client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'keep this one' }],
      });
      expect(r.choices[0]!.message.content).toBe(answer);
    } finally {
      await replaying.stop();
    }
  });

  it('refuses what cannot work, saying what to do', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'lg-cli-cassette-'));
    const cases: Array<[string[], RegExp]> = [
      [['--replay', empty, '--upstream', 'https://example.com'], /leave out --upstream \(or add --on-miss record/],
      [['--replay', empty, '--record', empty], /--on-miss record; else record into another directory/],
      [['--on-miss', 'record'], /--on-miss goes with --replay DIR/],
      [['--replay', empty, '--on-miss', 'forward'], /--on-miss takes fail, record or simulate \(got "forward"\)/],
      [['--replay', empty, '--on-miss', 'simulate', '--upstream', 'https://example.com'], /leave out --upstream/],
      [['--match-ignore', 'user'], /--match-ignore goes with --record DIR or --replay DIR/],
      [['--replay', empty, '--match-ignore', 'tools..x'], /--match-ignore: "tools..x" is not a request path/],
      [['--replay-speed', '2'], /goes with --replay DIR/],
      [['--replay', empty, '--replay-speed', 'fast'], /--replay-speed takes a number/],
      [['--record', empty, '--no-capture'], /leave out --no-capture/],
      [['--replay', empty, '--port', '0'], /the cassette has no exchanges/],
      [['--replay', join(empty, 'nope'), '--port', '0'], /no such directory/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(['serve', '--no-log', ...args], { LOOPGATE_TOKEN: TOKEN });
      expect(r.code, args.join(' ')).toBe(args.includes('--port') ? 3 : 2);
      expect(r.err, args.join(' ')).toMatch(message);
    }
  });
});
