// Every byte of outside text that reaches a terminal is escaped, every command
// Loopgate suggests is quoted for the shell, colour works on a real terminal,
// and a reader that goes away (`| head`) ends a command quietly. The commands
// in-process (what they print, through cli/main.ts as the bin prints it); the
// built CLI for what only its process shows (a pseudo-terminal, a pipe, a
// reader that left); a real proxy, and a hostile upstream whose model IDs, owners, answers and
// errors carry ESC, OSC 52 (clipboard), OSC 8 (links), CSI, C1 CSI (U+009B),
// BEL, bidi overrides and a line break; a hostile loopgate.json; a tool that
// asks for a hostile model.
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { TOKEN, until } from '../proxy/stack.js';
import { runCli, runCliUntil, tempHome } from './io.js';
import { runBuiltCli, runCliInPty, type CliRun } from './terminal-run.js';

const H =
  '\x1b]52;c;SGVsbG8=\x07\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\\x1b[2K\x1b[1A\u009b31m\x07\u202e\u2066\nFORGED';
const KEY = 'sk-hostile-upstream-test-key-0123456789';
const HOSTILE_ID = `gpt-4o${H}`;

/** What may reach a terminal: no control character but line breaks (and, with colour, Loopgate's own SGR). */
function expectSafe(what: string, text: string, colour = false): void {
  const rest = colour ? text.replace(/\x1b\[(?:0|1|2|31|32|33|36)m/g, '') : text;
  const bad = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.exec(
    rest.replace(/\r\n/g, '\n'),
  );
  expect(
    bad,
    `${what}: raw ${bad && JSON.stringify(bad[0])} at ${bad && JSON.stringify(rest.slice(Math.max(0, bad.index - 40), bad.index + 20))}`,
  ).toBeNull();
  // Outside text never starts a line of its own.
  expect(text, `${what}: a forged line`).not.toMatch(/^FORGED/m);
}

function expectRunSafe(what: string, r: CliRun): void {
  expectSafe(`${what} (stdout)`, r.out);
  expectSafe(`${what} (stderr)`, r.err);
}

/** A relay gone bad: every string it can choose carries H. */
function hostileUpstream(): Promise<Server> {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        return send(200, {
          object: 'list',
          data: [
            {
              id: 'gpt-4o-mini',
              object: 'model',
              created: 0,
              owned_by: `owner${H}`,
              supported_endpoint_types: ['openai', `type${H}`],
            },
            { id: HOSTILE_ID, object: 'model', created: 0, owned_by: H, supported_endpoint_types: ['openai'] },
          ],
        });
      }
      if (req.method === 'POST' && req.url === '/v1/chat/completions') {
        const body = JSON.parse(raw || '{}') as { model?: string };
        if (body.model === 'gpt-4o-mini') {
          return send(200, {
            id: `chatcmpl-${H}`,
            object: 'chat.completion',
            created: 0,
            model: `gpt-4o-mini${H}`,
            choices: [{ index: 0, message: { role: 'assistant', content: `answer${H}` }, finish_reason: `stop${H}` }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          });
        }
      }
      send(404, {
        error: { message: `no such thing${H}`, type: `type${H}`, code: 'model_not_found', param: `param${H}` },
      });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let upstream: Server;
let upstreamUrl: string;
let proxy: RunningProxy;
let port: string;
let logFile: string;
/** A request that was served (hostile answer) and one that was refused (hostile model). */
let servedId: string;
let refusedId: string;
const env = () => ({ LOOPGATE_TOKEN: TOKEN, LOOPGATE_HOME: tempHome() });

async function chat(model: string, content: string): Promise<string> {
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [
        { role: 'system', content: `sys${H}` },
        { role: 'user', content },
      ],
    }),
  });
  await res.text();
  return res.headers.get('x-loopgate-request-id')!;
}

beforeAll(async () => {
  upstream = await hostileUpstream();
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  logFile = join(mkdtempSync(join(tmpdir(), 'loopgate-terminal-')), 'traffic.jsonl');
  proxy = await startProxy({
    upstream: upstreamUrl,
    key: KEY,
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile,
    onTraffic: () => undefined,
    onHint: () => undefined,
  });
  await proxy.refreshModels();
  port = String(proxy.port);
  servedId = await chat('gpt-4o-mini', `hello${H}`);
  refusedId = await chat(`${HOSTILE_ID}x`, 'hi');
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await new Promise((r) => upstream?.close(r));
});

describe('outside text reaching a terminal (every command, stdout and stderr)', () => {
  it('loopgate.json: an unknown key, a bad alias key and a parse error quoting a key', async () => {
    const cases: Array<[string, object | string, number | null]> = [
      ['unknown top-level key', { [`x${H}`]: 1 }, null],
      ['bad alias key', { aliases: { [`bad${H}`]: 'gpt-4o-mini' } }, 3],
      ['bad alias value', { aliases: { [`bad${H}`]: 1 } }, 3],
      ['parse error quoting a key', `{ ${JSON.stringify(`k${H}`)} 1 }`, 3],
    ];
    for (const [what, file, code] of cases) {
      const dir = mkdtempSync(join(tmpdir(), 'loopgate-project-'));
      writeFileSync(join(dir, 'loopgate.json'), typeof file === 'string' ? file : JSON.stringify(file));
      const r = await runCliUntil(['serve', '--port', '0', '--no-log'], env(), /curl -s/, { cwd: dir });
      if (code !== null) expect(r.code, `${what}: ${r.err}`).toBe(code);
      expect(r.err, what).toMatch(/loopgate\.json/);
      expect(r.err, what).toContain('\\u001b]52;c;SGVsbG8=\\u0007');
      expectRunSafe(`serve, loopgate.json with ${what}`, r);
    }
  }, 120_000);

  it("serve's alias hint quotes the upstream's closest IDs escaped", async () => {
    const r = await runCliUntil(
      ['serve', '--port', '0', '--no-log', '--upstream', upstreamUrl, '--allow-http', '--alias', 'my-model=gpt-4o'],
      { ...env(), LOOPGATE_API_KEY: KEY },
      /hint: alias my-model/,
      { cwd: tmpdir() },
    );
    expect(r.err).toMatch(
      /hint: alias my-model -> gpt-4o \(--alias\): no key lists "gpt-4o"; closest: .*"gpt-4o\\u001b\]52/,
    );
    expectRunSafe('serve alias hint', r);
  }, 60_000);

  it('models and doctor, as a table and as JSON that stays valid', async () => {
    const upstreamEnv = { ...env(), LOOPGATE_API_KEY: KEY };
    const table = await runCli(['models', '--upstream', upstreamUrl, '--allow-http'], upstreamEnv);
    expect(table.code, table.err).toBe(0);
    expect(table.out).toContain('gpt-4o\\x1b]52;c;SGVsbG8=');
    expectRunSafe('models', table);
    const json = await runCli(['models', '--upstream', upstreamUrl, '--allow-http', '--json'], upstreamEnv);
    expectRunSafe('models --json', json);
    expect((JSON.parse(json.out) as Array<{ id: string }>).map((m) => m.id)).toContain(HOSTILE_ID);
    const doctor = await runCli(['doctor', '--upstream', upstreamUrl, '--allow-http'], upstreamEnv);
    expect(doctor.out).toContain('3. GET /models');
    expectRunSafe('doctor', doctor);
    const doctorJson = await runCli(['doctor', '--upstream', upstreamUrl, '--allow-http', '--json'], upstreamEnv);
    expectRunSafe('doctor --json', doctorJson);
    expect(JSON.parse(doctorJson.out).steps.length).toBeGreaterThan(3);
    const keys = await runCli(['doctor', '--upstream', upstreamUrl, '--allow-http'], {
      ...env(),
      LOOPGATE_API_KEY: `one=${KEY},two=${KEY}`,
    });
    expect(keys.out).toContain('Which key serves what');
    expectRunSafe('doctor, two keys', keys);
  }, 120_000);

  it("run's closing advice: the tool's model escaped, the suggested command quoted for the shell", async () => {
    const tool = (model: string) =>
      `fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST', headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ model: ${JSON.stringify(model)}, messages: [{ role: 'user', content: 'hi' }] }) }).then((r) => process.exit(r.status === 200 ? 0 : 1));`;
    const hostile = await runCli(['run', '--port', port, '--', process.execPath, '-e', tool(`${HOSTILE_ID}x`)], env());
    expect(hostile.err).toContain('loopgate run: the proxy refused model "gpt-4o\\u001b]52');
    // The command to paste: bash's $'…', so the bytes stay what the tool sent and none reaches the terminal raw.
    expect(hostile.err).toContain("`loopgate serve --alias $'gpt-4o\\x1b]52;c;SGVsbG8=\\x07");
    expectRunSafe('run hint (hostile model)', hostile);

    // A model ID with shell syntax in it: the suggested command, pasted into bash, passes it as one word.
    const model = "gpt-4o-mini'$(touch pwned);x";
    const shelly = await runCli(['run', '--port', port, '--', process.execPath, '-e', tool(model)], env());
    const command = /`(loopgate serve --alias [^`]+)`/.exec(shelly.err)?.[1];
    expect(command, shelly.err).toBeDefined();
    const cwd = mkdtempSync(join(tmpdir(), 'loopgate-paste-'));
    const words = execFileSync('bash', ['-c', command!.replace(/^loopgate serve/, "printf '%s\\n'")], {
      cwd,
      encoding: 'utf8',
    });
    expect(words).toBe(`--alias\n${model}=gpt-4o-mini\n`);
    expectRunSafe('run hint (shell syntax)', shelly);
  }, 120_000);

  it('tail and show, every view, with colour off (a pipe) and on (a pseudo-terminal)', async () => {
    const views = [
      ['tail', '--no-follow', '--port', port],
      ['tail', '--no-follow', '--json', '--port', port],
      ['show', servedId, '--port', port],
      ['show', servedId, '--wire', '--port', port],
      ['show', servedId, '--json', '--port', port],
      ['show', servedId, '--curl', '--port', port],
      ['show', refusedId, '--wire', '--port', port],
    ];
    for (const args of views) {
      const r = await runCli(args, env());
      expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
      expectRunSafe(args.join(' '), r);
      if (args.includes('--json'))
        for (const line of args[0] === 'tail' ? r.out.trim().split('\n') : [r.out]) JSON.parse(line);
    }
    for (const args of [views[0]!, views[3]!, views[6]!]) {
      const r = await runCliInPty(args, env());
      expect(r.code, `${args.join(' ')} in a pty: ${r.out}`).toBe(0);
      expectSafe(`${args.join(' ')} in a pty`, r.out, true);
    }
  }, 120_000);
});

describe('colour on a real terminal', () => {
  // Regression: colour was marked with U+E000/U+E001 and escaped along with the client's text, so a
  // terminal showed `\ue0002\ue00022:52:30\ue001 …` and never a colour.
  it('tail and show print SGR codes and no private-use characters; NO_COLOR and a pipe print none', async () => {
    const tail = await runCliInPty(['tail', '--no-follow', '--port', port], env());
    expect(tail.out).toMatch(/\x1b\[2m\d\d:\d\d:\d\d\x1b\[0m \x1b\[36m[0-9a-f]{8}\x1b\[0m POST/);
    expect(tail.out).toContain('\x1b[32m200\x1b[0m');
    expect(tail.out).not.toMatch(/[\ue000-\uf8ff]|\\ue00[01]/);
    const show = await runCliInPty(['show', refusedId, '--port', port], env());
    expect(show.out).toContain(`\x1b[1mRequest ${refusedId}\x1b[0m`);
    expect(show.out).toContain('\x1b[33m404\x1b[0m');
    expect(show.out).not.toMatch(/[\ue000-\uf8ff]|\\ue00[01]/);
    const plain = await runCliInPty(['tail', '--no-follow', '--port', port], { ...env(), NO_COLOR: '1' });
    expect(plain.out).toContain(servedId.slice(0, 8));
    expect(plain.out).not.toContain('\x1b[');
    const piped = await runBuiltCli(['tail', '--no-follow', '--port', port], { env: env() });
    expect(piped.out).not.toContain('\x1b[');
  }, 120_000);
});

describe('a reader that goes away (`| head`)', () => {
  const noStack = (what: string, r: CliRun) => {
    expect(r.err, what).not.toMatch(/EPIPE|Unhandled 'error'|\n\s+at /);
  };

  it('every command that prints ends quietly, with its own exit code, when its stdout has no reader', async () => {
    const e = env();
    const commands: Array<[string[], number, NodeJS.ProcessEnv?]> = [
      [['--help'], 0],
      [['--version'], 0],
      [['env'], 0],
      [['token'], 0],
      [['serve', '--port', '0', '--no-log'], 0],
      [['simulate', '--port', '0'], 0],
      [['models', '--direct'], 0],
      [['doctor', '--direct'], 0],
      [['models', '--upstream', upstreamUrl, '--allow-http'], 0, { LOOPGATE_API_KEY: KEY }],
      [['tail', '--no-follow', '--port', port], 0],
      [['tail', '--no-follow', '--json', '--port', port], 0],
      [['show', servedId, '--wire', '--port', port], 0],
      [['replay', servedId, '--port', port], 0],
      [['faults', '--port', port], 0],
      [['faults', '--json', '--port', port], 0],
      [['export', '--log', logFile, '--jsonl', join(tempHome(), 'out.jsonl')], 0],
      [['serve', '--help'], 0],
    ];
    for (const [args, code, extra] of commands) {
      const r = await runBuiltCli(args, { env: { ...e, ...extra }, closeStdout: true });
      noStack(args.join(' '), r);
      expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(code);
    }
  }, 300_000);

  it('a following tail stops at its next line once its reader is gone', async () => {
    const running = runBuiltCli(['tail', '--lines', '0', '--port', port], { env: env(), closeStdout: true });
    // Its subscription is up once the proxy counts it; then a request gives it a line to write.
    await until(() => (proxy.traffic!.subscribers > 0 ? true : undefined), 30_000, 'tail to subscribe');
    await chat('gpt-4o-mini', 'for the follower');
    const r = await running;
    noStack('tail (following)', r);
    expect(r.code).toBe(0);
  }, 60_000);

  it('a command whose stderr has no reader keeps its exit code and prints no stack', async () => {
    const r = await runBuiltCli(['serve', '--upstream', upstreamUrl, '--allow-http', '--port', '0'], {
      env: env(),
      closeStderr: true,
    });
    expect(r.code).toBe(3);
    const usage = await runBuiltCli(['models', '--bogus'], { env: env(), closeStderr: true });
    expect(usage.code).toBe(2);
  }, 60_000);
});
