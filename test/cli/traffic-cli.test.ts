// `loopgate tail`, `show` and `replay` against a real proxy in front of the
// simulator: what they print, their exit codes, a missing proxy, an unknown
// request, an impostor on the port (never sent the token), and a replay that
// reaches the simulator byte for byte.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, namedKeys, startStack, TOKEN, until, type Stack } from '../proxy/stack.js';
import { CLI, runCli, tempHome } from './io.js';

const run = promisify(execFile);
let s: Stack;
let port: string;
const env = () => ({ LOOPGATE_TOKEN: TOKEN });

beforeAll(async () => {
  s = await startStack({
    key: undefined,
    keys: namedKeys({ default: KEYS.default, claude: KEYS.claude }),
  });
  port = String(s.proxy.port);
});
afterAll(() => s.close());

async function chat(content: string): Promise<string> {
  const { response } = await s
    .openai()
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })
    .withResponse();
  return response.headers.get('x-loopgate-request-id')!;
}

describe('loopgate show', () => {
  it('prints the overview and the conversation of a request, by the id tail prints', async () => {
    const id = await chat('show me');
    const r = await runCli(['show', id.slice(0, 8), '--port', port], env());
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`Request ${id}`);
    expect(r.out).toMatch(/route\s+default \([0-9a-f]{12}\) native/);
    expect(r.out).toContain('user: show me');
    expect(r.out).toContain('assistant: Echo: show me');
    expect(r.out).not.toContain('Wire');
    const wire = await runCli(['show', id, '--port', port, '--wire'], env());
    expect(wire.out).toContain('> request headers');
    expect(wire.out).toMatch(/authorization: \[REDACTED:[0-9a-f]{4}\]/);
    const json = await runCli(['show', id, '--port', port, '--json'], env());
    expect(JSON.parse(json.out).record.id).toBe(id);
  });

  it('says so, exit 1, for a request the proxy does not hold', async () => {
    const r = await runCli(['show', '00000000-0000-4000-8000-000000000000', '--port', port], env());
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/No request 00000000-0000-4000-8000-000000000000 in the traffic ring/);
  });

  it('exit 3 when no proxy answers, and exit 2 without an id', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const free = String((closed.address() as { port: number }).port);
    await new Promise((r) => closed.close(r));
    const r = await runCli(['show', 'abcdef12', '--port', free], env());
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/no Loopgate proxy answers on http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    expect((await runCli(['show', '--port', port], env())).code).toBe(2);
    expect((await runCli(['show', 'x', '--proxy', 'http://localhost:8787'], env())).code).toBe(2);
  });

  it('never sends the token to something on the port that cannot prove it knows it (exit 3)', async () => {
    const seen: string[] = [];
    const impostor = createServer((req, res) => {
      seen.push(String(req.headers.authorization ?? '') + String(req.url));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ loopgate: '0.1.0', requireToken: true, entries: [] }));
    });
    await new Promise<void>((r) => impostor.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(impostor.address() as { port: number }).port}`;
      for (const cmd of [
        ['show', 'abcdef12'],
        ['replay', 'abcdef12'],
        ['tail', '--no-follow'],
      ]) {
        const r = await runCli([...cmd, '--proxy', url], env());
        expect(r.code, cmd.join(' ')).toBe(3);
        expect(r.err).toMatch(/not a Loopgate proxy that knows this local token, so the token was not sent/);
      }
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.some((h) => h.includes(TOKEN))).toBe(false);
    } finally {
      await new Promise((r) => impostor.close(r));
    }
  });

  it('--curl prints a command that runs as pasted, with the local token from `loopgate token`, never the key', async () => {
    const id = await chat('curl me');
    const { stdout } = await run(process.execPath, [CLI, 'show', id, '--curl', '--port', port], {
      env: { PATH: process.env.PATH, LOOPGATE_TOKEN: TOKEN },
    });
    // The command spelled as this install reaches it (the banner's rule): here `node /abs/dist/cli.js`.
    expect(stdout).toMatch(/"Authorization: Bearer \$\(node '?\/[^ ]+\/dist\/cli\.js'? token\)"/);
    expect(stdout).not.toContain(TOKEN);
    expect(stdout).not.toContain(KEYS.default);
    s.sim.clearRequests();
    const { stdout: answer } = await run('bash', ['-c', stdout], {
      env: { PATH: process.env.PATH, LOOPGATE_TOKEN: TOKEN, LOOPGATE_HOME: tempHome() },
    });
    expect(JSON.parse(answer).choices[0].message.content).toBe('Echo: curl me');
    expect(s.sim.requests.filter((q) => q.path === '/v1/chat/completions')).toHaveLength(1);
  });
});

describe('loopgate replay', () => {
  it('sends the request again through the proxy: the simulator gets the same body, byte for byte, and the new record points at the original', async () => {
    s.sim.clearRequests();
    const id = await chat('replay me');
    const r = await runCli(['replay', id.slice(0, 8), '--port', port], env());
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      new RegExp(`POST /v1/chat/completions 200 gpt-4o-mini default native .* replay of ${id.slice(0, 8)}`),
    );
    const posts = s.sim.requests.filter((q) => q.path === '/v1/chat/completions');
    expect(posts).toHaveLength(2);
    expect(posts[1]!.bodySha256).toBe(posts[0]!.bodySha256);
    expect(posts[1]!.bodyBytes).toBe(posts[0]!.bodyBytes);
    // The credential is the proxy's own key both times, never the token, and the replay marker stays local.
    expect(posts[1]!.credentials).toEqual(posts[0]!.credentials);
    expect(posts[1]!.headers['x-loopgate-replay-of']).toBeUndefined();
    const newest = s.proxy.traffic!.list({ limit: 1 })[0]!;
    expect(newest.record.replayOf).toBe(id);
  });

  it('sends an edited body with --body', async () => {
    const id = await chat('original');
    const file = join(tempHome(), 'edited.json');
    writeFileSync(file, JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'edited' }] }));
    const r = await runCli(['replay', id, '--port', port, '--body', file], env());
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/gpt-4\.1/);
    expect(s.proxy.traffic!.list({ limit: 1 })[0]!.requestBody).toContain('edited');
  });

  it('exit 1 when the replay fails, with its line saying why', async () => {
    const { response } = await s
      .openai()
      .chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })
      .withResponse()
      .catch((e: { headers: Headers }) => ({
        response: e.headers ? { headers: e.headers } : { headers: new Headers() },
      }));
    const id = response.headers.get('x-loopgate-request-id')!;
    const r = await runCli(['replay', id, '--port', port], env());
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/ 404 .*\[model-not-found\]|\[model-not-found\]/);
    // `show` says what to fix, in words.
    const shown = await runCli(['show', id, '--port', port], env());
    expect(shown.out).toMatch(/what to do\s+\S/);
  });
});

describe("a cached request's tokens in show and tail (issue 42 item 2)", () => {
  it('show and tail give the prompt whole (uncached + cache read + cache write), the cached share beside it', async () => {
    // About 1,500 tokens at the simulator's 4 characters a token: past Sonnet's cache minimum.
    const system = [
      {
        type: 'text' as const,
        text: 'The quick brown fox jumps over the lazy dog. '.repeat(134),
        cache_control: { type: 'ephemeral' as const },
      },
    ];
    const ask = async (content: string) => {
      const { response } = await s
        .anthropic()
        .messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, system, messages: [{ role: 'user', content }] })
        .withResponse();
      return response.headers.get('x-loopgate-request-id')!;
    };
    await ask('the first turn writes the cache');
    const id = await ask('the second turn reads it');
    const json = await runCli(['show', id, '--port', port, '--json'], env());
    const t = (JSON.parse(json.out) as { record: { tokens: Record<string, number> } }).record.tokens;
    expect(t.cacheRead, 'the second turn read the cache').toBeGreaterThan(1000);
    const prompt = t.input! + t.cacheRead! + t.cacheWrite5m! + t.cacheWrite1h!;
    const show = await runCli(['show', id, '--port', port], env());
    expect(show.out).toMatch(
      new RegExp(`^ {2}usage\\s+prompt ${prompt} \\(uncached ${t.input}, cache read ${t.cacheRead}\\b`, 'm'),
    );
    const tail = await runCli(['tail', '--no-follow', '--lines', '1', '--port', port], env());
    expect(tail.out).toContain(`in ${prompt} (${t.cacheRead} cached) out ${t.output}`);
  });
});

describe('loopgate tail', () => {
  it('--no-follow prints the recent requests, filtered, as lines or JSON', async () => {
    await chat('tail one');
    await s
      .openai(undefined, 'lg-local-wrong-token-0000000000000')
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
      .catch(() => undefined);
    const all = await runCli(['tail', '--no-follow', '--port', port], env());
    expect(all.code, all.err).toBe(0);
    expect(all.out.split('\n').length).toBeGreaterThanOrEqual(2);
    const errors = await runCli(['tail', '--no-follow', '--errors', '--port', port], env());
    expect(errors.out.split('\n').every((l) => / (4|5)\d\d /.test(l))).toBe(true);
    expect(errors.out).toContain('[wrong-local-token]');
    const json = await runCli(
      ['tail', '--no-follow', '--json', '--status', '2xx', '--lines', '3', '--port', port],
      env(),
    );
    const records = json.out.split('\n').map((l) => JSON.parse(l) as { status: number });
    expect(records.length).toBeLessThanOrEqual(3);
    expect(records.every((x) => x.status === 200)).toBe(true);
    expect((await runCli(['tail', '--status', '99', '--port', port], env())).code).toBe(2);
  });

  it('follows new requests as they finish, one line each, no colour when not a terminal', async () => {
    // tail prints nothing until a request finishes: start it and wait for its subscription instead.
    const spawned = (await import('node:child_process')).spawn(
      process.execPath,
      [CLI, 'tail', '--lines', '0', '--port', port],
      { env: { PATH: process.env.PATH, LOOPGATE_TOKEN: TOKEN } },
    );
    const out: string[] = [];
    spawned.stdout.on('data', (d: Buffer) => out.push(d.toString()));
    try {
      await until(() => (s.proxy.traffic!.subscribers > 0 ? true : undefined), 10_000, 'tail to subscribe');
      const id = await chat('followed');
      await until(() => (out.join('').includes(id.slice(0, 8)) ? true : undefined), 10_000, 'the line');
      const line = out
        .join('')
        .split('\n')
        .find((l) => l.includes(id.slice(0, 8)))!;
      expect(line).toMatch(/POST \/v1\/chat\/completions 200 gpt-4o-mini default native/);
      expect(line).not.toContain('\x1b[');
    } finally {
      spawned.kill();
    }
  });
});
