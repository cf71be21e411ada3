// `loopgate doctor` and `loopgate models` against the simulator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { KEYS } from '../proxy/stack.js';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { exited, runCli, spawnCli, tempHome } from './io.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});
afterAll(() => sim.close());

describe('loopgate doctor', () => {
  it('walks the first-use order and passes for a good key (exit 0)', async () => {
    const r = await runCli(['doctor', '--upstream', `${sim.baseUrl}/v1`], { LOOPGATE_API_KEY: KEYS.default });
    expect(r.code).toBe(0);
    const names = r.out
      .split('\n')
      .filter((l) => /^\d\./.test(l))
      .map((l) => l.split(/\s{2,}/)[0]);
    expect(names).toEqual([
      '1. URL form',
      '2. API key',
      '3. GET /models',
      '4. POST /responses (stream false)',
      '4. POST /responses (stream true)',
      '4. POST /chat/completions (stream false)',
      '4. POST /chat/completions (stream true)',
      '5. POST {site_url}/v1/messages',
    ]);
    expect(r.out).toMatch(/1\. URL form\s+WARN.*\/v1 2 times/);
    expect(r.out).toMatch(/5\. POST \{site_url\}\/v1\/messages\s+SKIP/);
  });

  it('a Claude group: Responses is missing on the route (a warning: Responses failing while Chat Completions works is the route, not the key), Messages passes', async () => {
    const r = await runCli(['doctor', '--upstream', sim.url, '--json'], { LOOPGATE_API_KEY: KEYS.claude });
    const report = JSON.parse(r.out);
    expect(r.code).toBe(0);
    const byName = Object.fromEntries(report.steps.map((s: { name: string; result: string }) => [s.name, s.result]));
    expect(byName['4. POST /responses (stream false)']).toBe('warn');
    expect(byName['4. POST /chat/completions (stream true)']).toBe('ok');
    expect(byName['5. POST {site_url}/v1/messages (stream true)']).toBe('ok');
  });

  it('a bad key fails at /models with the diagnosis (exit 1), and never prints the key', async () => {
    const key = 'sk-doctor-canary-key-00000000000000000';
    const r = await runCli(['doctor', '--upstream', sim.url], { LOOPGATE_API_KEY: key });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/3\. GET \/models\s+FAIL\s+401.*rejected the API key/);
    expect(r.out + r.err).not.toContain(key);
  });

  it('a key with "Bearer " pasted in front fails at the key step: bad configuration (exit 3)', async () => {
    const r = await runCli(['doctor', '--upstream', sim.url], { LOOPGATE_API_KEY: `Bearer ${KEYS.default}` });
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/2\. API key\s+FAIL/);
  });

  it('reads the key from stdin with --key-stdin', async () => {
    const r = await runCli(['doctor', '--upstream', sim.url, '--key-stdin'], {}, `${KEYS.default}\n`);
    expect(r.code).toBe(0);
  });
});

describe('loopgate models', () => {
  it("prints a table of the key group's models with protocols", async () => {
    const r = await runCli(['models', '--upstream', sim.url], { LOOPGATE_API_KEY: KEYS.claude });
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^MODEL ID\s+OWNED BY\s+PROTOCOLS$/);
    expect(r.out).toMatch(/claude-sonnet-4-6\s+anthropic\s+chat, messages/);
  });

  it('--json prints the raw list', async () => {
    const r = await runCli(['models', '--upstream', sim.url, '--json'], { LOOPGATE_API_KEY: KEYS.narrow });
    expect(JSON.parse(r.out).map((m: { id: string }) => m.id)).toEqual(['gpt-4o-mini']);
  });

  it('explains a refusal (exit 1)', async () => {
    const r = await runCli(['models', '--upstream', sim.url], { LOOPGATE_API_KEY: KEYS.disabled });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/401/);
  });
});

describe('loopgate doctor with several keys', () => {
  it('checks each key in the first-use order, then says which key serves each model on each protocol', async () => {
    const r = await runCli(['doctor', '--upstream', sim.url, '--allow-http'], {
      LOOPGATE_API_KEY: `claude=${KEYS.claude},default=${KEYS.default}`,
    });
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(/^key claude\n/m);
    expect(r.out).toMatch(/^key default\n/m);
    const matrix = r.out.slice(r.out.indexOf('Which key serves what'));
    expect(matrix).toMatch(/^claude-sonnet-4-6\s+claude bridged\s+claude native\s+claude native$/m);
    expect(matrix).toMatch(/^gpt-4o-mini\s+default native\s+default native\s+default bridged$/m);
    for (const k of [KEYS.claude, KEYS.default]) expect(r.out + r.err).not.toContain(k);
    const json = JSON.parse(
      (
        await runCli(['doctor', '--upstream', sim.url, '--allow-http', '--json'], {
          LOOPGATE_API_KEY: `claude=${KEYS.claude},default=${KEYS.default}`,
        })
      ).out,
    );
    expect(json.keys.map((k: { name: string }) => k.name)).toEqual(['claude', 'default']);
    expect(json.matrix.find((row: { model: string }) => row.model === 'claude-sonnet-4-6').routes).toEqual({
      responses: 'claude bridged',
      chat: 'claude native',
      messages: 'claude native',
    });
  });
});

describe('doctor and models against the running proxy (what the tools see)', () => {
  const home = tempHome();
  let proxy: { child: ChildProcess; url: string } | undefined;
  beforeAll(async () => {
    // The built CLI as a user runs it: the embedded simulator with a demo key of each group.
    const { child, match } = await spawnCli(
      ['serve', '--port', '0', '--no-log'],
      { LOOPGATE_HOME: home },
      /^\s+curl -s (http:\/\/[\d.:]+)\//,
    );
    proxy = { child, url: match[1]! };
  });
  afterAll(async () => {
    proxy?.child.kill('SIGTERM');
    if (proxy) await exited(proxy.child);
  });

  it('models --proxy lists the union of every key the proxy holds, with the local token', async () => {
    const r = await runCli(['models', '--proxy', proxy!.url, '--json'], { LOOPGATE_HOME: home });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`checking through the Loopgate proxy at ${proxy!.url}`);
    const ids = JSON.parse(r.out).map((m: { id: string }) => m.id);
    // The claude group's and the chat-only group's models: one key alone lists neither set whole.
    expect(ids).toEqual(expect.arrayContaining(['claude-sonnet-4-6', 'gpt-4o-mini']));
  });

  it('doctor --proxy walks the first-use order through the proxy, Messages included (exit 0)', async () => {
    const r = await runCli(['doctor', '--proxy', proxy!.url, '--json'], { LOOPGATE_HOME: home });
    expect(r.code, r.out + r.err).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.siteUrl).toBe(proxy!.url);
    const byName = Object.fromEntries(report.steps.map((s: { name: string; result: string }) => [s.name, s.result]));
    expect(byName['3. GET /models']).toBe('ok');
    expect(byName['5. POST {site_url}/v1/messages (stream true)']).toBe('ok');
  });

  it('--proxy where no proxy listens, or one that does not know this local token: exit 3, and the token is not sent', async () => {
    const gone = await runCli(['models', '--proxy', 'http://127.0.0.1:9'], { LOOPGATE_HOME: home });
    expect(gone.code).toBe(3);
    expect(gone.err).toMatch(/no Loopgate proxy answers on http:\/\/127\.0\.0\.1:9/);
    const stranger = await runCli(['doctor', '--proxy', proxy!.url], { LOOPGATE_HOME: tempHome() });
    expect(stranger.code).toBe(3);
    expect(stranger.err).toMatch(/not a Loopgate proxy that proves it knows your local token/);
    expect((await runCli(['models', '--proxy', 'ftp://x'], { LOOPGATE_HOME: home })).code).toBe(2);
    expect((await runCli(['models', '--proxy', proxy!.url, '--upstream', sim.url], { LOOPGATE_HOME: home })).code).toBe(
      2,
    );
  });

  it('a server that only claims to be a --no-token Loopgate proxy never gets the local token', async () => {
    const seen: string[] = [];
    const impostor = createServer((req, res) => {
      seen.push(String(req.headers.authorization ?? ''));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ loopgate: '0.1.0', requireToken: false, object: 'list', data: [] }));
    });
    await new Promise<void>((r) => impostor.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(impostor.address() as { port: number }).port}`;
      const r = await runCli(['models', '--proxy', url], { LOOPGATE_HOME: home });
      expect(r.code).toBe(3);
      expect(r.err).toMatch(/not a Loopgate proxy that proves it knows your local token/);
      const token = (await runCli(['token'], { LOOPGATE_HOME: home })).out;
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.some((h) => h.includes(token))).toBe(false);
      // A host name could resolve elsewhere after the proof: refused.
      expect(
        (await runCli(['models', '--proxy', `http://localhost:${new URL(url).port}`], { LOOPGATE_HOME: home })).code,
      ).toBe(2);
    } finally {
      await new Promise((r) => impostor.close(r));
    }
  });

  it('with nothing configured, the proxy on the default port is the one asked; --direct asks the simulator', async () => {
    // The default port may be taken on a developer's machine: then a proxy there with another token must not be used.
    const { child, lines } = await spawnCli(
      ['serve', '--no-log'],
      { LOOPGATE_HOME: home },
      /^\s+curl -s |already in use/,
    ).catch((err: Error) => ({ child: undefined, lines: [err.message] }));
    try {
      const auto = await runCli(['models', '--json'], { LOOPGATE_HOME: home });
      expect(auto.code, auto.err).toBe(0);
      if (child && !lines.join('\n').includes('already in use')) {
        expect(auto.err).toContain('checking through the Loopgate proxy at http://127.0.0.1:8787');
        expect(auto.err).not.toContain('using the embedded simulator');
      } else {
        expect(auto.err).toContain('using the embedded simulator');
      }
      const direct = await runCli(['models', '--direct'], { LOOPGATE_HOME: home });
      expect(direct.code).toBe(0);
      expect(direct.err).toContain('using the embedded simulator');
    } finally {
      child?.kill('SIGTERM');
      if (child) await exited(child);
    }
  });
});
