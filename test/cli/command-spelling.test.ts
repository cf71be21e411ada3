// Every message that names a Loopgate command spells it the way the banner does for
// this install (cli/invocation.ts commandLine): run from the checkout with no
// `loopgate` on PATH, that is `node /abs/dist/cli.js …`, never a `loopgate …` this shell
// does not have. The installed spelling (`loopgate token`) is checked in install.test.ts.
import { createServer } from 'node:net';
import { spawn } from 'node:child_process';
import { delimiter, dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, exited, spawnCli, tempHome } from './io.js';

/** node and curl, and no `loopgate` command. */
const BARE_PATH = [dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter);
const home = tempHome();
const env = { LOOPGATE_HOME: home, PATH: BARE_PATH };

/** The built CLI as a child, as a user in that shell runs it. */
function cli(
  args: string[],
  stdin = '',
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...env, ...extraEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(stdin);
  });
}

/** A port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

describe('commands named in messages are spelled as the banner spells them', () => {
  let spelled = '';
  let url = '';
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const { child, lines } = await spawnCli(['serve', '--port', '0', '--no-log'], env, /^\s+curl -s (\S+)/);
    stop = async () => {
      child.kill('SIGTERM');
      await exited(child);
    };
    const text = lines.join('\n');
    url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)![1]!;
    spelled = /^\s+command\s+(.+?)\s{3}\(install it/m.exec(text)![1]!;
  }, 30_000);
  afterAll(async () => stop?.());

  it('the banner spells the CLI as `node <abs>/dist/cli.js` here', () => {
    expect(spelled).toBe(`node ${CLI}`);
  });

  it("the proxy's 401 and its connectivity answer", async () => {
    const denied = await fetch(`${url}/v1/models`);
    expect(denied.status).toBe(401);
    const message = ((await denied.json()) as { error: { message: string } }).error.message;
    // The proxy runs on a port of its own here, so the advice carries it (issue 31).
    expect(message).toContain(`run \`${spelled} token\` (or \`eval "$(${spelled} env --port ${new URL(url).port})"\`)`);
    expect(message).not.toMatch(/`loopgate /);
    const probe = await (await fetch(`${url}/`)).text();
    expect(probe).toContain(`(\`${spelled} token\`)`);
  });

  it('the CLI: an unknown command, run and doctor without a proxy, lsp without --stdio, an empty --key-stdin, a failed doctor', async () => {
    const port = String(await closedPort());
    const unknown = await cli(['serv']);
    expect(unknown.err).toContain(`Run \`${spelled} --help\``);
    const run = await cli(['run', '--port', port, '--', process.execPath, '-e', '']);
    expect(run.err).toContain(`Start it first with \`${spelled} serve\``);
    const noCommand = await cli(['run', '--port', port, '--']);
    expect(noCommand.err).toContain(`e.g. ${spelled} run -- claude`);
    const viaProxy = await cli(['doctor', '--proxy', `http://127.0.0.1:${port}`]);
    expect(viaProxy.err).toContain(`Start it with \`${spelled} serve\``);
    const lsp = await cli(['lsp']);
    expect(lsp.err).toContain(`run \`${spelled} lsp --stdio\``);
    const emptyStdin = await cli(['serve', '--key-stdin', '--port', '0', '--no-log'], '\n');
    expect(emptyStdin.err).toContain(`\`pass show api-key | ${spelled} serve --key-stdin\``);
    const failed = await cli(['doctor', '--upstream', `http://127.0.0.1:${port}`, '--allow-http'], '', {
      LOOPGATE_API_KEY: 'sk-spelling-test-0000000000000000',
    });
    expect(failed.code).not.toBe(0);
    expect(failed.out).toContain(`then run \`${spelled} doctor\` again`);
    for (const r of [unknown, run, noCommand, viaProxy, lsp, emptyStdin, failed])
      expect(r.out + r.err).not.toMatch(/`loopgate (?!run:)/);
  }, 60_000);
});
