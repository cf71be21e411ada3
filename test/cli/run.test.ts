// `loopgate run -- <command>` as a user runs it: the built CLI in a child process,
// against a real proxy (and simulator) on port 0, starting real child processes.
// `claude` and `codex` are small fake executables (third-party tools) first on PATH.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, freePort, runCli, tempHome } from './io.js';
import { runBuiltCli } from './terminal-run.js';
import { startStack, TOKEN, until, type Stack } from '../proxy/stack.js';
import { runCredential } from '../../rules/access/run-credential.js';

/** `loopgate run` hands each tool a credential of its own run (rules/access/run-credential.ts), never the token. */
const RUN_CREDENTIAL = expect.stringMatching(/^lg-local-run_[a-z0-9-]+_[0-9a-z]+_[0-9a-z]+_[0-9a-f]{32}$/);

const CANARY = 'sk-run-canary-real-key-000000000000000000';
const PROVIDER_CANARY = 'sk-ant-run-canary-provider-00000000000000';

/** A directory with fake `claude` and `codex` executables that print their argv and environment as JSON. */
function fakeTools(): string {
  const dir = mkdtempSync(join(tmpdir(), 'loopgate-fake-tools-'));
  for (const name of ['claude', 'codex']) {
    const file = join(dir, name);
    writeFileSync(
      file,
      `#!${process.execPath}\nprocess.stdout.write(JSON.stringify({ argv: process.argv.slice(2), env: process.env }));\n`,
    );
    chmodSync(file, 0o755);
  }
  return dir;
}

/** The built CLI to completion with exactly `env` (plus PATH unless given). */
const runBuilt = (args: string[], env: NodeJS.ProcessEnv) => runBuiltCli(args, { env });

const PRINT_ENV = 'process.stdout.write(JSON.stringify(process.env))';

// The built CLI, its child tool and the proxy are three processes per case: at a load of 7 on 2 cores (vitest beside
// real VS Code) one case took over vitest's 20 s.
describe('loopgate run', { timeout: 60_000 }, () => {
  let stack: Stack;
  let port: string;
  let tools: string;
  /** The parent environment a user would have: the real key exported, and provider variables of their own. */
  let parent: NodeJS.ProcessEnv;

  beforeAll(async () => {
    stack = await startStack({ logOwnTraffic: true }); // the health lines show what reached the proxy
    port = new URL(stack.proxy.url).port;
    tools = fakeTools();
    parent = {
      PATH: `${tools}${delimiter}${process.env.PATH}`,
      LOOPGATE_HOME: tempHome(),
      LOOPGATE_TOKEN: TOKEN,
      LOOPGATE_API_KEY: CANARY,
      OPENAI_API_KEY: CANARY,
      ANTHROPIC_API_KEY: PROVIDER_CANARY,
      ANTHROPIC_AUTH_TOKEN: PROVIDER_CANARY,
      MY_COPY_OF_THE_KEY: CANARY,
      KEEP_ME: 'kept',
    };
  });
  afterAll(async () => stack?.close());

  it('gives the child the base URLs and the local token, and never the real key', async () => {
    const r = await runBuilt(['run', '--port', port, '--', process.execPath, '-e', PRINT_ENV], parent);
    expect(r.err.trim()).toBe(
      "loopgate run: left out of the tool's environment because they hold a real key: MY_COPY_OF_THE_KEY.",
    );
    expect(r.code).toBe(0);
    const env = JSON.parse(r.out) as Record<string, string>;
    expect(env).toMatchObject({
      OPENAI_BASE_URL: `${stack.proxy.url}/v1`,
      OPENAI_API_KEY: RUN_CREDENTIAL,
      ANTHROPIC_BASE_URL: stack.proxy.url,
      ANTHROPIC_AUTH_TOKEN: RUN_CREDENTIAL,
      ANTHROPIC_API_KEY: RUN_CREDENTIAL,
      KEEP_ME: 'kept',
    });
    expect(env.LOOPGATE_API_KEY).toBeUndefined();
    expect(env.MY_COPY_OF_THE_KEY).toBeUndefined();
    expect(r.out).not.toContain(CANARY);
    expect(r.out).not.toContain(PROVIDER_CANARY);
  });

  it('the child reaches the simulator through the proxy with what it was given', async () => {
    const script = `fetch(process.env.OPENAI_BASE_URL + '/models', { headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY } })
      .then((r) => r.json()).then((j) => process.stdout.write(JSON.stringify(j.data.map((m) => m.id))))`;
    const r = await runBuilt(['run', '--port', port, '--', process.execPath, '-e', script], parent);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toContain('gpt-4o-mini');
    expect(stack.sim.requests.some((q) => q.path === '/v1/models')).toBe(true);
  });

  it('claude: ANTHROPIC_BASE_URL is the proxy root and only ANTHROPIC_AUTH_TOKEN carries a credential', async () => {
    const r = await runBuilt(['run', '--port', port, '--', 'claude', '-p', 'hello'], parent);
    expect(r.code).toBe(0);
    const { argv, env } = JSON.parse(r.out) as { argv: string[]; env: Record<string, string> };
    expect(argv).toEqual(['-p', 'hello']);
    expect(env.ANTHROPIC_BASE_URL).toBe(stack.proxy.url);
    expect(env.ANTHROPIC_AUTH_TOKEN).toEqual(RUN_CREDENTIAL);
    expect('ANTHROPIC_API_KEY' in env).toBe(false);
    expect(r.out).not.toContain(CANARY);
    expect(r.out).not.toContain(PROVIDER_CANARY);
  });

  it('codex: a loopgate provider block goes right after the executable, and it works against the proxy', async () => {
    const r = await runBuilt(['run', '--port', port, '--', 'codex', 'exec', 'hello'], parent);
    expect(r.code).toBe(0);
    const { argv, env } = JSON.parse(r.out) as { argv: string[]; env: Record<string, string> };
    expect(argv).toEqual([
      '-c',
      'model_provider=loopgate',
      '-c',
      `model_providers.loopgate={name="Loopgate",base_url="${stack.proxy.url}/v1",env_key="LOOPGATE_TOKEN",wire_api="responses"}`,
      'exec',
      'hello',
    ]);
    expect(env.LOOPGATE_TOKEN).toEqual(RUN_CREDENTIAL);
    expect(r.out).not.toContain(CANARY);
    // What Codex would do with that block: Responses at base_url with the token from env_key.
    const baseURL = /base_url="([^"]+)"/.exec(argv[3]!)![1]!;
    // That run has ended, so its credential is refused now; a live run's credential works with the block.
    const ended = new OpenAI({ baseURL, apiKey: env.LOOPGATE_TOKEN, maxRetries: 0 });
    await expect(ended.models.list()).rejects.toMatchObject({ status: 401 });
    const live = runCredential(TOKEN, { tool: 'codex', started: Date.now(), nonce: 'live01' });
    const client = new OpenAI({ baseURL, apiKey: live, maxRetries: 0 });
    const res = await client.responses.create({ model: 'gpt-4o-mini', input: 'via the codex provider block' });
    expect(res.output_text).toContain('via the codex provider block');
  });

  it.each([
    [['-c', 'model_provider=openai', 'exec', 'hi']],
    [['--config', 'model_provider = "azure"', 'exec', 'hi']],
    [['--profile', 'work', 'exec', 'hi']],
    [['-p', 'work', 'exec', 'hi']],
    [['--oss', 'exec', 'hi']],
  ])('codex: a provider the user chose (%j) is respected, the token is still set', async (args) => {
    const r = await runBuilt(['run', '--port', port, '--', 'codex', ...args], parent);
    expect(r.code).toBe(0);
    const { argv, env } = JSON.parse(r.out) as { argv: string[]; env: Record<string, string> };
    expect(argv).toEqual(args);
    expect(env.LOOPGATE_TOKEN).toEqual(RUN_CREDENTIAL);
    expect(env.OPENAI_BASE_URL).toBe(`${stack.proxy.url}/v1`);
  });

  it("exits with the child's exit code", async () => {
    const r = await runBuilt(['run', '--port', port, '--', process.execPath, '-e', 'process.exit(7)'], parent);
    expect(r.code).toBe(7);
  });

  it('exits with 128+N when the child dies of signal N', async () => {
    const r = await runBuilt(
      ['run', '--port', port, '--', process.execPath, '-e', "process.kill(process.pid, 'SIGKILL')"],
      parent,
    );
    expect(r.code).toBe(128 + 9);
  });

  /** `loopgate run` (the built CLI) over a tool script: a wait for a text on its stdout, what it printed, its exit code. */
  function running(script: string) {
    const child = spawn(process.execPath, [CLI, 'run', '--port', port, '--', process.execPath, '-e', script], {
      env: parent,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const checks: Array<() => void> = [];
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      for (const check of checks) check();
    });
    return {
      child,
      out: () => out,
      closed: new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code))),
      seen: (text: string) =>
        new Promise<void>((resolve) => {
          const check = () => (out.includes(text) ? resolve() : undefined);
          checks.push(check);
          check();
        }),
    };
  }

  it('forwards SIGTERM to the child and exits with what the child exits with', async () => {
    const tool = running(
      "process.on('SIGTERM', () => { process.stdout.write('got SIGTERM\\n'); process.exit(5); }); process.stdout.write('ready\\n'); setInterval(() => {}, 1000);",
    );
    await tool.seen('ready\n');
    tool.child.kill('SIGTERM');
    expect(await tool.closed).toBe(5);
    expect(tool.out()).toContain('got SIGTERM');
  });

  it('a SIGINT to loopgate run is not passed on (the terminal already sends Ctrl+C to the tool; twice means "quit now")', async () => {
    const tool = running(
      "process.on('SIGINT', () => process.stdout.write('got SIGINT\\n')); process.on('SIGTERM', () => { process.stdout.write('got SIGTERM\\n'); process.exit(6); }); process.stdout.write('ready\\n'); setInterval(() => {}, 1000);",
    );
    await tool.seen('ready\n');
    tool.child.kill('SIGINT'); // to `run` alone, as a stray signal would be
    tool.child.kill('SIGTERM'); // signals are handled in order: by the time this one reaches the tool, a forwarded SIGINT would have too
    expect(await tool.closed).toBe(6);
    expect(tool.out()).toContain('got SIGTERM');
    expect(tool.out()).not.toContain('got SIGINT');
  });

  it('command not found: a clear message and exit 127', async () => {
    const r = await runBuilt(['run', '--port', port, '--', 'loopgate-no-such-command-xyz'], parent);
    expect(r.code).toBe(127);
    expect(r.err.trim().split('\n').pop()).toBe('loopgate run: command not found: loopgate-no-such-command-xyz');
  });

  it('refuses to put the real key on the command line (exit 2), without echoing it', async () => {
    const r = await runCli(['run', '--port', port, '--', process.execPath, '-e', `console.log("${CANARY}")`], parent);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/argument 3 \(counting the command as 1\) holds a real key/);
    expect(r.err).not.toContain(CANARY);
  });

  it('a proxy that does not know this token: exit 3, and the token is not sent', async () => {
    const before = stack.traffic.length;
    const r = await runCli(['run', '--port', port, '--', process.execPath, '-e', ''], {
      LOOPGATE_TOKEN: 'lg-local-some-other-token-000000000000',
    });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/not a Loopgate proxy that knows this local token/);
    expect(r.err).toMatch(/LOOPGATE_HOME or LOOPGATE_TOKEN/);
    // Only the challenge reached the proxy (200 with a proof that did not match); a token would have been a 401.
    const health = await until(
      () => (stack.traffic.length > before ? stack.traffic.slice(before) : undefined),
      5000,
      'the health line',
    );
    expect(health).toEqual([expect.stringMatching(/^GET \/_loopgate\/health 200 /)]);
  });
});

describe('loopgate run against a --no-token proxy', () => {
  let stack: Stack | undefined;
  afterAll(async () => stack?.close());

  it('is refused without --no-token: an unproven answer could be any program on the port', async () => {
    stack = await startStack({ token: null });
    const port = new URL(stack.proxy.url).port;
    const r = await runBuilt(['run', '--port', port, '--', process.execPath, '-e', PRINT_ENV], {
      LOOPGATE_HOME: tempHome(),
      LOOPGATE_TOKEN: TOKEN,
    });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/--no-token/);
    expect(r.out).toBe('');
  });

  it('with --no-token, starts the tool with a placeholder credential: the token does not go to a proxy that proved nothing', async () => {
    stack ??= await startStack({ token: null });
    const port = new URL(stack.proxy.url).port;
    const r = await runBuilt(['run', '--no-token', '--port', port, '--', process.execPath, '-e', PRINT_ENV], {
      LOOPGATE_HOME: tempHome(),
      LOOPGATE_TOKEN: TOKEN,
    });
    expect(r.code).toBe(0);
    const env = JSON.parse(r.out) as Record<string, string>;
    expect(env.OPENAI_BASE_URL).toBe(`${stack.proxy.url}/v1`);
    expect(env.OPENAI_API_KEY).toEqual(RUN_CREDENTIAL);
    expect(env.OPENAI_API_KEY).not.toContain(TOKEN);
    expect(env.ANTHROPIC_AUTH_TOKEN).toEqual(RUN_CREDENTIAL);
  });
});

describe('loopgate run without a proxy', () => {
  let squatter: Server | undefined;
  afterAll(async () => new Promise<void>((r) => (squatter ? squatter.close(() => r()) : r())));

  it('nothing listens: says to start loopgate serve and which port it tried (exit 3)', async () => {
    const port = await freePort();
    const r = await runCli(['run', '--port', String(port), '--', process.execPath, '-e', '']);
    expect(r.code).toBe(3);
    expect(r.err).toContain(`http://127.0.0.1:${port}`);
    expect(r.err).toMatch(/Start it first with `.+ serve`/);
    expect(r.err).toMatch(/npm start/);
  });

  it('something else on the port gets no token and the tool does not start (exit 3)', async () => {
    const seen: string[] = [];
    squatter = createHttpServer((req, res) => {
      seen.push(JSON.stringify(req.headers));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"loopgate":"0.0.0","requireToken":true}');
    });
    await new Promise<void>((r) => squatter!.listen(0, '127.0.0.1', r));
    const { port } = squatter.address() as { port: number };
    const r = await runCli(['run', '--port', String(port), '--', process.execPath, '-e', ''], {
      LOOPGATE_TOKEN: TOKEN,
    });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/not a Loopgate proxy/);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.join('\n')).not.toContain(TOKEN);
  });
});

describe('loopgate run usage', () => {
  it('no command after -- is exit 2 with a one-line message', async () => {
    const r = await runCli(['run', '--']);
    expect(r.code).toBe(2);
    // The example is spelled as this process reaches the CLI (test/cli/command-spelling.test.ts).
    expect(r.err).toMatch(/^loopgate run: no command after --, e\.g\. .+ run -- claude -p "hello"$/);
  });

  it('a command without -- is exit 2 and says where the command goes', async () => {
    const r = await runCli(['run', 'claude']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^loopgate run: put the command after --, e\.g\. .+ run -- claude$/);
  });

  it('--budget-hard without a cap is exit 2 and says to give the cap', async () => {
    const r = await runCli(['run', '--budget-hard', '--', 'node', '-e', '0']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--budget-hard ends streams at the run cap: give the cap too (--budget USD');
  });

  it('--help describes the command', async () => {
    const r = await runCli(['run', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: loopgate run/);
  });
});
