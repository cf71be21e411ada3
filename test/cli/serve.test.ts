// `loopgate serve` as a user runs it: the built CLI in a child process, no
// configuration, in front of the embedded simulator.
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { tmpdir } from 'node:os';
import { delimiter, dirname } from 'node:path';
import { CLI, exited, runCli, spawnCli, tempHome } from './io.js';
import { tokenFile } from '../../storage/config/token-file.js';

/** node and curl, and no `loopgate` command. */
const BARE_PATH = [dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter);

describe('loopgate serve (no configuration)', () => {
  const home = tempHome();
  let stop: (() => Promise<void>) | undefined;
  afterAll(async () => stop?.());

  it('prints the listening URL, site/base URLs, client base URLs, how to get the token, and a curl line that works', async () => {
    const { child, lines } = await spawnCli(
      ['serve', '--port', '0'],
      { LOOPGATE_HOME: home, PATH: BARE_PATH },
      /^\s+curl -s (\S+)/,
    );
    stop = async () => {
      child.kill('SIGTERM');
      expect(await exited(child)).toBe(0);
    };
    const text = lines.join('\n');
    const url = /Loopgate proxy listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)![1]!;
    expect(text).toMatch(/upstream site_url\s+http:\/\/127\.0\.0\.1:\d+\s+\(embedded simulator, demo keys\)/);
    expect(text).toMatch(/keys\s+default, claude, chat-only/);
    expect(text).toMatch(/upstream base_url\s+http:\/\/127\.0\.0\.1:\d+\/v1/);
    expect(text).toContain(`OpenAI clients     base URL ${url}/v1`);
    expect(text).toContain(`Anthropic clients  base URL ${url}`);
    // Not installed as a command here: the banner spells the CLI the way any shell reaches it, and says how to install it.
    expect(text).toContain(`\`node ${CLI} token\``);
    expect(text).toMatch(/command\s+node \S+\/dist\/cli\.js\s+\(install it as `loopgate`: npm install -g \S+\)/);
    expect(text).not.toContain('npx');
    // Each proxy keeps its own log, named by its port.
    expect(text).toMatch(new RegExp(`traffic log\\s+\\S+/traffic-${new URL(url).port}\\.jsonl$`, 'm'));

    // The curl line, exactly as printed, in a shell somewhere else with no `loopgate` on PATH.
    const curl = lines.find((l) => l.trim().startsWith('curl '))!.trim();
    const out = execFileSync('bash', ['-c', curl], {
      cwd: tmpdir(),
      env: { PATH: BARE_PATH, LOOPGATE_HOME: home },
      encoding: 'utf8',
    });
    expect(JSON.parse(out).data.map((m: { id: string }) => m.id)).toContain('gpt-4o-mini');

    // And an SDK pointed at it with the local token.
    const token = (await runCli(['token'], { LOOPGATE_HOME: home })).out;
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: token, maxRetries: 0 });
    const r = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'from the CLI test' }],
    });
    expect(r.choices[0]!.message.content).toContain('from the CLI test');
  });

  it('refuses a non-loopback --host without --allow-remote (exit 3)', async () => {
    const r = await runCli(['serve', '--port', '0', '--host', '0.0.0.0', '--no-log']);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/not a loopback address/);
  });

  it('refuses an upstream without a key, and never takes the key from argv', async () => {
    const r = await runCli(['serve', '--upstream', 'https://api.example.com/v1', '--port', '0']);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/LOOPGATE_API_KEY/);
    const bad = await runCli(['serve', '--key', 'sk-should-not-be-accepted-000000']);
    expect(bad.code).toBe(2);
  });

  it('reports a port in use (exit 4)', async () => {
    const { child, match } = await spawnCli(
      ['serve', '--port', '0', '--no-log'],
      { LOOPGATE_HOME: tempHome() },
      /listening on http:\/\/127\.0\.0\.1:(\d+)/,
    );
    try {
      const r = await runCli(['serve', '--port', match[1]!, '--no-log']);
      expect(r.code).toBe(4);
      expect(r.err).toMatch(/already in use/);
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  });
});

describe('loopgate token / env', () => {
  it('creates the token once, 0600, and prints the same one again', async () => {
    const home = tempHome();
    const a = await runCli(['token'], { LOOPGATE_HOME: home });
    const b = await runCli(['token'], { LOOPGATE_HOME: home });
    expect(a.out).toMatch(/^lg-local-[A-Za-z0-9_-]{43}$/);
    expect(b.out).toBe(a.out);
    expect(statSync(tokenFile({ LOOPGATE_HOME: home })).mode & 0o777).toBe(0o600);
  });

  it('LOOPGATE_TOKEN overrides the stored token', async () => {
    expect((await runCli(['token'], { LOOPGATE_TOKEN: 'lg-local-override' })).out).toBe('lg-local-override');
  });

  it('env prints the exports with the token, never a real key', async () => {
    const r = await runCli(['env', '--port', '9999'], {
      LOOPGATE_TOKEN: 'lg-local-abc',
      LOOPGATE_API_KEY: 'sk-real-key-must-not-appear-0000',
    });
    expect(r.out.split('\n')).toEqual([
      "export OPENAI_BASE_URL='http://127.0.0.1:9999/v1'",
      "export OPENAI_API_BASE='http://127.0.0.1:9999/v1'",
      "export OPENAI_API_KEY='lg-local-abc'",
      "export ANTHROPIC_BASE_URL='http://127.0.0.1:9999'",
      "export ANTHROPIC_AUTH_TOKEN='lg-local-abc'",
      "export ANTHROPIC_API_KEY='lg-local-abc'",
    ]);
  });

  it('--help on each command and --version', async () => {
    for (const cmd of ['serve', 'simulate', 'doctor', 'models', 'env', 'token', 'export', 'lsp']) {
      const r = await runCli([cmd, '--help']);
      expect(r.code, cmd).toBe(0);
      expect(r.out, cmd).toMatch(new RegExp(`loopgate ${cmd}`));
    }
    expect((await runCli(['--version'])).out).toMatch(/^\d+\.\d+\.\d+/);
    expect((await runCli(['nope'])).code).toBe(2);
  });

  it('refuses a malformed key with what to fix (exit 3), and checks ports and hosts', async () => {
    const up = ['serve', '--upstream', 'https://api.example.com', '--port', '0', '--no-log'];
    const tab = await runCli(up, { LOOPGATE_API_KEY: 'sk-live-0123456789\tabcdef' });
    expect(tab.code).toBe(3);
    expect(tab.err).toMatch(
      /LOOPGATE_API_KEY: key #1 \(sk-li…cdef\): the API key contains a space, line break or control character/,
    );
    expect(tab.err).not.toContain('0123456789');
    const bearer = await runCli(up, { LOOPGATE_API_KEY: 'Bearer sk-live-0123456789abcdef' });
    expect(bearer.code).toBe(3);
    expect(bearer.err).toMatch(/starts with "Bearer "/);
    const emptyStdin = await runCli([...up, '--key-stdin'], {}, '');
    expect(emptyStdin.code).toBe(3);
    expect(emptyStdin.err).toMatch(/standard input was empty/);
    const port = await runCli(['serve', '--port', '70000', '--no-log']);
    expect(port.code).toBe(2);
    expect(port.err).toMatch(/--port takes a whole number from 0 to 65535/);
    expect((await runCli(['env', '--port', '0'])).code).toBe(2);
    const v6 = await runCli(['env', '--host', '::1', '--port', '9000'], { LOOPGATE_TOKEN: 'lg-local-abc' });
    expect(v6.out).toContain("OPENAI_BASE_URL='http://[::1]:9000/v1'");
  });

  it('demo mode ignores a real key and says so; the banner passes a non-default port on to `loopgate env`', async () => {
    const home = tempHome();
    const { child, lines, match } = await spawnCli(
      ['serve', '--port', '0', '--no-log'],
      { LOOPGATE_HOME: home, PATH: BARE_PATH, LOOPGATE_API_KEY: 'sk-proj-real-key-not-for-the-simulator-01' },
      /^\s+curl -s (\S+)/,
    );
    try {
      const text = lines.join('\n');
      const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text)![1]!;
      expect(text).toMatch(/the API key you gave is not used: no upstream is set/);
      expect(text).toContain(`eval "$(node ${CLI} env --port ${port})"`);
      expect(text).not.toContain('sk-proj-real-key');
      const token = (await runCli(['token'], { LOOPGATE_HOME: home })).out;
      const res = await fetch(match[1]!, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200); // the demo key, not the real one, went to the simulator
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  });
});
