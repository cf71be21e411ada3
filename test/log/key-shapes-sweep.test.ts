// Issue 23 "Also": keys of several shapes (sk-…, mixed case, standard base64
// with `==` padding, a named list entry in padded base64url) planted through
// every input the proxy takes (LOOPGATE_API_KEY as a list, --key-stdin, the
// editor's IPC start message) and through every field a request carries; then
// every sink is searched for them in every encoding: the JSONL log, the
// console (serve's output, the IPC traffic lines), the OTLP collector (raw
// bytes and decoded spans, message content on), `loopgate export` (HAR and
// JSONL), the replies, and the environment and argv of what we start
// (`loopgate run`'s tool, the editor's forked proxy).
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { childEnv } from '../../extension/child-env.js';
import type { FromProxy, ToProxy } from '../../core/ipc.js';
import { defaultFixture, startSimulator, type Simulator } from '../../simulator/index.js';
import { fingerprint } from '../../simulator/request-record.js';
import { CLI, runCli, tempHome } from '../cli/io.js';
import { startReceiver, type Receiver } from '../otlp/receiver.js';
import { until } from '../proxy/stack.js';
import { assertNoCanary, makeCanary } from './canary.js';
import { record } from './records.js';
import { sharedForAll } from '../kit/lifecycle.js';

const mixedCase = () => {
  const body = randomBytes(24)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '');
  return `Mx${body.slice(0, 28)}Qz`;
};
const padded = (s: string) => s + '='.repeat((4 - (s.length % 4)) % 4);

const SK = makeCanary('sk-sweep-');
const MIXED = mixedCase();
/** 16 random bytes in standard base64: 24 characters ending in `==` (the shape F-B split into a name). */
const B64 = randomBytes(16).toString('base64');
/** A named entry whose key is padded base64url (32 bytes: one `=`). */
const NAMED = padded(randomBytes(32).toString('base64url'));
const KEYS = [SK, MIXED, B64, NAMED];
const TOKEN = makeCanary('lg-local-sweep-');
const SECRETS = [...KEYS, TOKEN];
const LIST = `${SK},${MIXED}\n${B64}\nteam=${NAMED}\n`;
const IPC_KEYS = [{ key: SK }, { key: MIXED }, { key: B64 }, { name: 'team', key: NAMED }];

/** One group per key, each with a model no other key lists: every key carries traffic. */
const ROUTES = [
  { key: SK, group: 'sweep-sk', protocols: ['chat', 'responses'] as const, model: 'gpt-4o-mini' },
  { key: MIXED, group: 'sweep-mixed', protocols: ['chat', 'messages'] as const, model: 'claude-sonnet-4-6' },
  { key: B64, group: 'sweep-b64', protocols: ['chat'] as const, model: 'deepseek-reasoner' },
  { key: NAMED, group: 'sweep-named', protocols: ['chat'] as const, model: 'gpt-4.1' },
];

function fixture() {
  const groups = { ...defaultFixture.groups } as Record<string, unknown>;
  for (const r of ROUTES) groups[r.group] = { protocols: [...r.protocols], models: [r.model] };
  const keys = [
    ...defaultFixture.keys,
    ...ROUTES.map((r) => ({ key: r.key, group: r.group, status: 'active' as const, balance: 100 })),
  ];
  return { groups, keys } as NonNullable<Parameters<typeof startSimulator>[0]>['fixture'];
}

const note = `keys ${KEYS.join(' ')} token ${TOKEN}`;

/**
 * Real traffic through the proxy that carries every key in every field a request has; returns the
 * replies that came whole (not streamed: a key the upstream echoes across two stream chunks reaches
 * the client as it was sent, which is the client's own text and no sink of ours).
 */
async function plantTraffic(url: string, sim: Simulator): Promise<{ replies: string[]; requests: number }> {
  const replies: string[] = [];
  const streamed: string[] = [];
  let requests = 0;
  const headers = { 'x-note': note, 'x-api-key-copy': SK, 'x-padded': B64 };
  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: TOKEN, maxRetries: 0, defaultHeaders: headers });
  const anthropic = new Anthropic({ baseURL: url, apiKey: TOKEN, maxRetries: 0, defaultHeaders: headers });

  // Each key's own model, its content holding every key, streamed and not.
  const chat = await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: note },
      { role: 'user', content: note },
    ],
    metadata: { k: B64, n: NAMED },
  });
  replies.push(JSON.stringify(chat));
  const responses = await openai.responses.create({ model: 'gpt-4o-mini', input: note, stream: true });
  for await (const e of responses) streamed.push(JSON.stringify(e));
  const messages = await anthropic.messages.create({
    model: 'claude-sonnet-4-6',
    max_tokens: 64,
    messages: [{ role: 'user', content: note }],
    stream: true,
  });
  for await (const e of messages) streamed.push(JSON.stringify(e));
  const reasoner = await openai.chat.completions.create({
    model: 'deepseek-reasoner',
    messages: [{ role: 'user', content: note }],
    stream: true,
  });
  for await (const c of reasoner) streamed.push(JSON.stringify(c));
  const named = await openai.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: note }] });
  replies.push(JSON.stringify(named));
  requests += 5;
  // The content really travelled (the simulator echoes it, masked on the way back)...
  expect(replies.join('')).toMatch(/Echo: keys \[REDACTED:/);
  expect(streamed.join('')).toContain('Echo: keys');
  // ...and each key, whole, was the one the upstream saw for its model (a key split into a name would not be).
  for (const key of KEYS)
    expect(
      sim.requests.some((q) => q.credentials.some((c) => c.fingerprint === fingerprint(key))),
      `upstream requests with ${KEYS.indexOf(key)}`,
    ).toBe(true);

  const send = async (path: string, init: RequestInit, status: number) => {
    const res = await fetch(url + path, {
      ...init,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        ...(init.headers as Record<string, string>),
      },
    });
    const text = await res.text();
    expect(res.status, `${path}: ${text.slice(0, 200)}`).toBe(status);
    replies.push(text);
    requests++;
  };
  // The query, a model ID that is a key (the 404 quotes the model), a body that does not parse.
  await send(
    `/v1/models?key=${encodeURIComponent(SK)}&api_key=${encodeURIComponent(B64)}&token=${encodeURIComponent(NAMED)}`,
    { method: 'GET' },
    200,
  );
  for (const key of KEYS)
    await send(
      '/v1/chat/completions',
      { method: 'POST', body: JSON.stringify({ model: key, messages: [{ role: 'user', content: 'x' }] }) },
      404,
    );
  await send('/v1/chat/completions', { method: 'POST', body: `${note} not json` }, 400);
  return { replies, requests };
}

interface Sinks {
  console: string[];
  logFile: string;
}

/** Every sink but the console and the extra ones the caller adds: the log files, the collector, the export files and `loopgate export`'s own output. */
async function sweepCommon(s: Sinks, receiver: Receiver, keyNames: string[]): Promise<string> {
  const dir = join(s.logFile, '..');
  const logs = readdirSync(dir).filter((f) => f.startsWith('traffic'));
  const logText = logs.map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
  expect(logText.length).toBeGreaterThan(1000);
  // Each key carried traffic under its name (a key split into a name would show here).
  const names = new Set(
    logText
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { key?: string }).key)
      .filter(Boolean),
  );
  for (const n of keyNames) expect([...names], `records under key "${n}"`).toContain(n);

  const har = join(dir, 'out.har');
  const jsonl = join(dir, 'out.jsonl');
  const exported = await runCli(['export', '--har', har, '--jsonl', jsonl, '--log', s.logFile]);
  expect(exported.code, exported.err).toBe(0);
  const harText = readFileSync(har, 'utf8');
  expect(JSON.parse(harText).log.entries.length).toBeGreaterThan(8);
  expect(harText).toMatch(/\[REDACTED:[0-9a-f]{4}\]/); // the sweep looked at real content

  expect(receiver.errors).toEqual([]);
  const otlp = [...receiver.bodies.map((b) => b.toString('latin1')), ...receiver.decoded].join('\n');
  return [logText, harText, readFileSync(jsonl, 'utf8'), exported.out, exported.err, otlp].join('\n');
}

function spawnServe(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin?: string,
): { child: ChildProcess; lines: string[]; url: Promise<string> } {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const url = new Promise<string>((resolve, reject) => {
    let buf = '';
    const take = (c: Buffer) => {
      buf += c.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      lines.push(...parts);
      // Ready once the banner's last line is out.
      if (parts.some((l) => /^\s+curl -s /.test(l)))
        resolve(/listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(lines.join('\n'))![1]!);
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${lines.join('\n')}`)));
  });
  child.stdin!.end(stdin ?? '');
  return { child, lines, url };
}

function stopped(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('key shapes sweep (issue 23)', () => {
  const sim = sharedForAll(() => startSimulator({ port: 0, fixture: fixture() }));

  for (const input of ['LOOPGATE_API_KEY', '--key-stdin'] as const) {
    it(`serve with the keys in ${input}: no sink holds a key or the token`, async () => {
      const receiver = await startReceiver();
      const dir = mkdtempSync(join(tmpdir(), 'loopgate-key-sweep-'));
      const logFile = join(dir, 'traffic.jsonl');
      const env = {
        LOOPGATE_HOME: tempHome(),
        LOOPGATE_TOKEN: TOKEN,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '20',
        ...(input === 'LOOPGATE_API_KEY' ? { LOOPGATE_API_KEY: LIST } : {}),
      };
      const args = [
        '--port',
        '0',
        '--upstream',
        sim.url,
        '--allow-http',
        '--log',
        logFile,
        '--log-bodies',
        '--otlp-content',
        ...(input === '--key-stdin' ? ['--key-stdin'] : []),
      ];
      const serve = spawnServe(args, env, input === '--key-stdin' ? LIST : undefined);
      try {
        const url = await serve.url;
        expect(serve.lines.join('\n')).toMatch(/keys\s+key-1, key-2, key-3, team/);
        const { replies, requests } = await plantTraffic(url, sim);
        await until(
          () => receiver.spans.length >= requests || undefined,
          15_000,
          `the spans (have ${receiver.spans.length} of ${requests})`,
        );
        serve.child.kill('SIGTERM');
        expect(await stopped(serve.child)).toBe(0);
        const text = await sweepCommon({ console: serve.lines, logFile }, receiver, [
          'key-1',
          'key-2',
          'key-3',
          'team',
        ]);
        assertNoCanary(text, SECRETS);
        assertNoCanary(serve.lines.join('\n'), SECRETS);
        assertNoCanary(replies.join('\n'), KEYS);
      } finally {
        serve.child.kill('SIGKILL');
        await receiver.close();
      }
    });
  }

  it('the editor path (IPC start message): no sink holds a key, nor the forked proxy’s environment or argv', async () => {
    const receiver = await startReceiver();
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-key-sweep-'));
    const logFile = join(dir, 'traffic.jsonl');
    // The editor's own environment holds copies of the keys under innocent names.
    const editorEnv = {
      ...process.env,
      LOOPGATE_HOME: tempHome(),
      NOTES: `old ${MIXED} key`,
      BACKUP: B64,
      TEAM: `team=${NAMED}`,
    };
    const child = fork(CLI, ['serve', '--ipc'], {
      env: childEnv(editorEnv, KEYS),
      stdio: ['pipe', 'pipe', 'pipe', 'ipc'],
    });
    const messages: FromProxy[] = [];
    const output: string[] = [];
    child.on('message', (m) => messages.push(m as FromProxy));
    child.stdout!.on('data', (c: Buffer) => output.push(c.toString()));
    child.stderr!.on('data', (c: Buffer) => output.push(c.toString()));
    try {
      child.send({
        kind: 'start',
        config: {
          upstream: sim.url,
          port: 0,
          logBodies: true,
          requireToken: true,
          logFile,
          otlp: { endpoint: receiver.url, content: true },
        },
        keys: IPC_KEYS,
        token: TOKEN,
      } satisfies ToProxy);
      const listening = await until(
        () => messages.find((m): m is Extract<FromProxy, { kind: 'listening' }> => m.kind === 'listening'),
        15_000,
        'the proxy to listen',
      );
      expect(listening.keys).toEqual(['key-1', 'key-2', 'key-3', 'team']);
      const pid = child.pid!;
      if (existsSync(`/proc/${pid}/environ`)) {
        assertNoCanary(readFileSync(`/proc/${pid}/environ`, 'utf8'), SECRETS);
        assertNoCanary(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), SECRETS);
      }
      const { replies, requests } = await plantTraffic(listening.url, sim);
      await until(
        () => messages.filter((m) => m.kind === 'request' || m.kind === 'health-probe').length >= requests || undefined,
        10_000,
        'the traffic lines',
      );
      child.send({ kind: 'stop' } satisfies ToProxy);
      // The editor's proxy takes no OTEL_* from the environment: spans leave on the default schedule, and at stop.
      await until(() => messages.find((m) => m.kind === 'stopped'), 15_000, 'the proxy to stop');
      await until(
        () => receiver.spans.length >= requests || undefined,
        15_000,
        `the spans (have ${receiver.spans.length} of ${requests})`,
      );
      const text = await sweepCommon({ console: [], logFile }, receiver, ['key-1', 'key-2', 'key-3', 'team']);
      assertNoCanary(text, SECRETS);
      assertNoCanary(JSON.stringify(messages) + output.join(''), SECRETS);
      assertNoCanary(replies.join('\n'), KEYS);
    } finally {
      child.kill('SIGKILL');
      await receiver.close();
    }
  });

  it('loopgate export of a log that holds the keys in plain (an older or hand-edited log): every key of the list is masked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-key-sweep-'));
    const log = join(dir, 'traffic.jsonl');
    const raw = record({
      requestBody: JSON.stringify({ note }),
      responseBody: `data: {"echo":${JSON.stringify(note)}}\n\n`,
      errorType: `upstream said ${encodeURIComponent(B64)}`,
    });
    writeFileSync(log, JSON.stringify(raw) + '\n', { mode: 0o600 });
    const har = join(dir, 'out.har');
    const jsonl = join(dir, 'out.jsonl');
    const r = await runCli(['export', '--har', har, '--jsonl', jsonl, '--log', log], {
      LOOPGATE_API_KEY: LIST,
      LOOPGATE_TOKEN: TOKEN,
    });
    expect(r.code, r.err).toBe(0);
    const text = [readFileSync(har, 'utf8'), readFileSync(jsonl, 'utf8'), r.out, r.err].join('\n');
    expect(text).toMatch(/\[REDACTED:[0-9a-f]{4}\]/);
    assertNoCanary(text, SECRETS);
  });

  describe('loopgate run with the same list', () => {
    it('the tool’s environment and argv hold no key; a key in its argv is refused by position', async () => {
      const receiver = await startReceiver();
      const dir = mkdtempSync(join(tmpdir(), 'loopgate-key-sweep-'));
      const home = tempHome();
      const serve = spawnServe(
        ['--port', '0', '--upstream', sim.url, '--allow-http', '--log', join(dir, 'traffic.jsonl')],
        { LOOPGATE_HOME: home, LOOPGATE_TOKEN: TOKEN, LOOPGATE_API_KEY: LIST },
      );
      try {
        const port = new URL(await serve.url).port;
        const user = {
          PATH: process.env.PATH,
          LOOPGATE_HOME: home,
          LOOPGATE_TOKEN: TOKEN,
          LOOPGATE_API_KEY: LIST,
          MY_BACKUP_KEY: SK,
          NOTES: `old ${MIXED} from last year`,
          PADDED: B64,
          TEAM_ENTRY: `team=${NAMED}`,
          OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${SK}`,
        };
        const script = 'process.stdout.write(JSON.stringify({ argv: process.argv, env: process.env }))';
        const ran = await runTool(['run', '--port', port, '--', process.execPath, '-e', script, 'plain-arg'], user);
        expect(ran.code, ran.err).toBe(0);
        const seen = JSON.parse(ran.out) as { argv: string[]; env: Record<string, string> };
        expect(seen.argv.slice(-1)).toEqual(['plain-arg']);
        // `loopgate run` hands the tool its run's own credential, derived from the token (rules/access/run-credential.ts).
        expect(seen.env.OPENAI_API_KEY).toMatch(/^lg-local-run_node_/);
        expect(seen.env.OPENAI_API_KEY).not.toContain(TOKEN);
        assertNoCanary(ran.out + ran.err, KEYS);
        for (const key of KEYS) {
          const refused = await runTool(
            ['run', '--port', port, '--', process.execPath, '-e', script, `--flag=${key}`],
            user,
          );
          expect(refused.code).toBe(2);
          expect(refused.out).toBe('');
          expect(refused.err).toContain('argument 4 (counting the command as 1) holds a real key');
          assertNoCanary(refused.err, SECRETS);
        }
      } finally {
        serve.child.kill('SIGTERM');
        await stopped(serve.child);
        await receiver.close();
      }
      assertNoCanary(serve.lines.join('\n'), SECRETS);
    });
  });
});

function runTool(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}
