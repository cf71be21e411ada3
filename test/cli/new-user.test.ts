// What a new user trips on (issue 31, section 5), as a user meets it: the CLI's commands (in-process, on real
// sockets; the built CLI where its process is what is tested: `run`'s tool's output, Ctrl+C), a real
// `loopgate serve` on a port that is not 8787, in front of the embedded simulator.
// - every command that talks to a proxy takes --port, and the proxy's own advice carries it;
// - Loopgate's own /_loopgate/* calls (made by tail, show, doctor, run) are in none of the log, the
//   console, tail, the view and the HAR, unless serve --log-own asks for them;
// - messages that said the wrong thing: an unreachable upstream, a bad upstream without a key,
//   --log /dev/stdout, a shutdown recorded as the client leaving, `run node -v`.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands } from '../../cli/commands.js';
import { DEFAULT_PORT } from '../../core/options.js';
import { logRecords, until } from '../proxy/stack.js';
import { exited, freePort, runCli, spawnCli, startCli, tempHome } from './io.js';
import { runBuiltCli } from './terminal-run.js';
import type { TrafficRecord } from '../../core/record.js';

/** A free port that is not the default: bound by us, then released. */
async function freePortNotDefault(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port !== DEFAULT_PORT) return port;
  }
}

/** The commands that talk to a running proxy, and those that do not (with why). Every command is in one of them. */
const TALKS_TO_PROXY = [
  'doctor',
  'models',
  'env',
  'run',
  'tail',
  'show',
  'replay',
  'export',
  'sessions',
  'usage',
  'faults',
  'budget',
  'mcp',
  'mcp-wrap',
];
const NO_PROXY: Record<string, string> = {
  serve: 'starts a proxy (its --port is where it listens)',
  simulate: 'starts the simulator alone',
  token: 'prints the local token from its file',
  lsp: 'the language server on stdio',
};

interface Serve {
  port: number;
  url: string;
  home: string;
  lines: string[];
  logFile: string;
  stop(): Promise<void>;
}

/** `loopgate serve` on a free port: in this process, or as the built CLI (stopped with SIGINT, as Ctrl+C does). */
async function startServe(extra: string[] = [], as: 'in-process' | 'process' = 'in-process'): Promise<Serve> {
  const home = tempHome();
  const port = await freePortNotDefault();
  const args = ['serve', '--port', String(port), ...extra];
  const ready = /^ {2}traffic log {8}(\S+)/;
  const started = as === 'process' ? await spawnCli(args, { LOOPGATE_HOME: home }, ready) : undefined;
  const inProcess = started ? undefined : await startCli(args, { LOOPGATE_HOME: home }, ready);
  const lines = (started ?? inProcess)!.lines;
  const logFile = lines.map((l) => ready.exec(l)?.[1]).find(Boolean)!;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    home,
    lines,
    logFile,
    async stop() {
      if (inProcess) return void (await inProcess.stop());
      started!.child.kill('SIGINT');
      await exited(started!.child);
    },
  };
}

describe('a proxy on another port', () => {
  let serve: Serve;
  let env: NodeJS.ProcessEnv;
  let token: string;
  let requestId: string;
  beforeAll(async () => {
    serve = await startServe();
    env = { LOOPGATE_HOME: serve.home };
    token = (await runCli(['token'], env)).out.trim();
    const res = await fetch(`${serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    requestId = res.headers.get('x-loopgate-request-id')!;
  }, 30_000);
  afterAll(async () => serve?.stop());

  it('every command is either one that talks to a proxy (and says --port in its help) or one that does not', () => {
    expect(commands.map((c) => c.name).sort()).toEqual([...TALKS_TO_PROXY, ...Object.keys(NO_PROXY)].sort());
    for (const name of TALKS_TO_PROXY) expect(commands.find((c) => c.name === name)!.usage, name).toMatch(/--port N/);
  });

  it('doctor, models, env, run, tail, show, replay and export all reach it with --port', async () => {
    const p = String(serve.port);
    const doctor = await runCli(['doctor', '--port', p], env);
    expect(doctor.err).toContain(`checking through the Loopgate proxy at ${serve.url}`);
    expect(doctor.code, doctor.out + doctor.err).toBe(0);
    const models = await runCli(['models', '--port', p, '--json'], env);
    expect(models.code, models.err).toBe(0);
    expect(models.err).toContain(serve.url);
    expect(JSON.parse(models.out).map((m: { id: string }) => m.id)).toContain('gpt-4o-mini');
    const exported = await runCli(['env', '--port', p], env);
    expect(exported.out).toContain(`OPENAI_BASE_URL='${serve.url}/v1'`);
    // The built CLI: the tool's output is the process's own (stdio inherited).
    const run = await runBuiltCli(
      ['run', '--port', p, '--', process.execPath, '-e', 'process.stdout.write(process.env.OPENAI_BASE_URL)'],
      { env },
    );
    expect(run.code, run.err).toBe(0);
    expect(run.out).toBe(`${serve.url}/v1`);
    const tail = await runCli(['tail', '--port', p, '--no-follow'], env);
    expect(tail.code, tail.err).toBe(0);
    expect(tail.out).toContain('POST /v1/chat/completions 200');
    const show = await runCli(['show', requestId, '--port', p], env);
    expect(show.code, show.err).toBe(0);
    expect(show.out).toContain('gpt-4o-mini');
    const replay = await runCli(['replay', requestId, '--port', p], env);
    expect(replay.code, replay.err).toBe(0);
    const har = join(mkdtempSync(join(tmpdir(), 'loopgate-har-')), 'out.har');
    const exportRun = await runCli(['export', '--port', p, '--har', har], env);
    expect(exportRun.code, exportRun.err).toBe(0);
  }, 60_000);

  it("the proxy's advice names the port: the 401 says `env --port N`, not `env` (which points tools at 8787)", async () => {
    for (const path of ['/v1/models', '/_loopgate/stats']) {
      const res = await fetch(`${serve.url}${path}`);
      expect(res.status).toBe(401);
      expect(await res.text()).toContain(`env --port ${serve.port})`);
    }
  });

  it("Loopgate's own calls (tail, show, doctor, run, models) are in none of the log, the console, tail and the HAR", async () => {
    const p = String(serve.port);
    // A request of the user's after them: once it is in every sink, theirs would be too.
    const res = await fetch(`${serve.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const marker = res.headers.get('x-loopgate-request-id')!;
    await until(() => logRecords(serve.logFile).some((r) => r.id === marker) || undefined, 10_000, 'the log line');
    await until(
      () => serve.lines.some((l) => l.startsWith('GET /v1/models 200')) || undefined,
      10_000,
      'the console line',
    );
    const own = (path: string) => path.startsWith('/_loopgate') || path === '/';
    expect(
      logRecords(serve.logFile)
        .filter((r) => own(r.path))
        .map((r) => r.path),
    ).toEqual([]);
    expect(serve.lines.filter((l) => /^(GET|POST|HEAD) \/_loopgate\//.test(l))).toEqual([]);
    const tail = await runCli(['tail', '--port', p, '--no-follow', '--json', '--lines', '500'], env);
    const tailed = tail.out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as TrafficRecord);
    expect(tailed.length).toBeGreaterThan(0);
    expect(tailed.filter((r) => own(r.path))).toEqual([]);
    const har = join(mkdtempSync(join(tmpdir(), 'loopgate-har-')), 'out.har');
    expect((await runCli(['export', '--port', p, '--har', har], env)).code).toBe(0);
    const urls = (
      JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: Array<{ request: { url: string } }> } }
    ).log.entries.map((e) => e.request.url);
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.filter((u) => new URL(u).pathname.startsWith('/_loopgate'))).toEqual([]);
  }, 60_000);
});

describe('serve --log-own', () => {
  it('puts them back, in the log, on the console and in tail alike', async () => {
    const serve = await startServe(['--log-own']);
    try {
      const env = { LOOPGATE_HOME: serve.home };
      const tail = await runCli(['tail', '--port', String(serve.port), '--no-follow', '--json'], env);
      expect(tail.code, tail.err).toBe(0);
      await until(
        () => logRecords(serve.logFile).some((r) => r.path.startsWith('/_loopgate/traffic')) || undefined,
        10_000,
        'the log line',
      );
      expect(serve.lines.some((l) => l.startsWith('GET /_loopgate/traffic'))).toBe(true);
      const again = await runCli(['tail', '--port', String(serve.port), '--no-follow', '--json'], env);
      expect(again.out).toContain('/_loopgate/');
    } finally {
      await serve.stop();
    }
  }, 30_000);
});

describe('messages that misled', () => {
  const home = tempHome();
  const KEY = 'sk-newuser-test-key-0123456789abcdef';

  it('a refused connection to the upstream says the upstream is unreachable, and where; not "the key and its group"', async () => {
    const dead = await freePortNotDefault();
    const port = await freePortNotDefault();
    const { lines, stop } = await startCli(
      ['serve', '--port', String(port), '--upstream', `http://127.0.0.1:${dead}`, '--no-log'],
      { LOOPGATE_HOME: home, LOOPGATE_API_KEY: KEY },
      /listening on/,
    );
    try {
      const line = await until(
        () => lines.find((l) => /unreachable|GET \/models failed/.test(l)),
        15_000,
        'the upstream line',
      );
      expect(line).toContain(`upstream http://127.0.0.1:${dead} is unreachable`);
      expect(lines.join('\n')).not.toContain('the key and its group');
    } finally {
      await stop();
    }
  }, 30_000);

  it('a bad upstream and no key: the upstream is named first, not "no API key"', async () => {
    const r = await runCli(['serve', '--port', '0', '--upstream', 'ftp://models.example'], { LOOPGATE_HOME: home });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/Upstream URL: .*ftp/);
    expect(r.err).not.toContain('no API key');
  });

  it('--log /dev/stdout refuses to start without first saying "requests are still served"', async () => {
    const r = await runCli(['serve', '--port', '0', '--log', '/dev/stdout'], { LOOPGATE_HOME: home });
    expect(r.code).toBe(3);
    expect(r.err).toContain('cannot write the traffic log /dev/stdout');
    expect(r.out + r.err).not.toContain('requests are still served');
  });

  it("Ctrl+C during a stream records the proxy's own shutdown, not client-aborted", async () => {
    const serve = await startServe([], 'process');
    const token = (await runCli(['token'], { LOOPGATE_HOME: serve.home })).out.trim();
    const res = await fetch(`${serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-sim-fault': 'stall-body' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-loopgate-request-id')!;
    await res.body!.getReader().read();
    await serve.stop();
    const rec = logRecords(serve.logFile).find((r) => r.id === id)!;
    expect(rec).toBeDefined();
    expect(rec.clientAborted).toBeFalsy();
    expect(rec.errorCode).toBe('proxy-stopped');
    expect(serve.lines.join('\n')).not.toContain('client-aborted');
  }, 30_000);

  it('`loopgate run node -v` says to put the command after --, not "unknown option -v"', async () => {
    const r = await runCli(['run', 'node', '-v'], { LOOPGATE_HOME: home });
    expect(r.code).toBe(2);
    expect(r.err).toContain('put the command after --');
    expect(r.err).toContain('run -- node -v');
    expect(r.err).not.toContain('unknown option');
    const withPort = await runCli(['run', '--port', '9000', 'node', '-v'], { LOOPGATE_HOME: home });
    expect(withPort.err).toContain('run --port 9000 -- node -v');
  });
});
