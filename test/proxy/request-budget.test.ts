// The budget of one request (issue 40, DESIGN.md §11): what the proxy spends per
// request in the operations that scale with a body, counted through the real
// proxy on real sockets, and failed above a budget. Every feature lives inside
// it or changes it here, openly.
//
// How it counts: the proxy runs in this process, with JSON.parse,
// JSON.stringify, Buffer#toString (UTF-8 decodes) and hashing (digests, and the
// bytes fed to update) wrapped for the measured window only. The simulator
// (`loopgate simulate`, built dist/cli.js) and the clients (the official SDKs
// and `ws`, request-budget-client.mjs) run in child processes, so nothing they
// do is counted: what is left is the proxy's own work, plus whatever the test
// runner does in the window (a few calls; WINDOW_SLACK allows for them).
//
// Each request carries an agent-like system prompt of BODY_SYSTEM_BYTES (tool
// output with a `%20` URL and an ANSI escape) and names no session (the SDKs'
// headers), so the session heuristic runs: a whole-body parse of the request
// shows as parsed bytes past the body's size.
import { spawn } from 'node:child_process';
import crypto, { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import type { TrafficRecord } from '../../core/record.js';
import { defaultFixture, type Fixture } from '../../simulator/index.js';
import { makeCanary } from '../log/canary.js';
import { until } from './stack.js';

/** Requests per row: enough that the runner's few calls in a window round away (WINDOW_SLACK). */
const N = 100;
/** Calls of each counted kind the window may hold beyond the budget: the test runner's own, not per request. */
const WINDOW_SLACK = 10;
const BODY_SYSTEM_BYTES = 8 * 1024;
/**
 * A decode of this many bytes or more is counted as a call: a body, an answer, a stream chunk (chat's
 * smallest are about 150 bytes). Shorter ones (a header value, a key name) count in the bytes only.
 */
const DECODE_MIN = 64;
/** Stream lengths compared: a stream's cost must not grow with its chunks. */
const SHORT_STREAM = 2;
const LONG_STREAM = 60;

type Kind = 'chat' | 'responses' | 'messages' | 'websocket';
type Proxy = 'full' | 'claude' | 'chatOnly';

interface Budget {
  /** JSON.parse calls. */
  parse: number;
  /** JSON.stringify calls. */
  stringify: number;
  /** Buffer#toString calls decoding DECODE_MIN bytes or more as UTF-8. */
  decode: number;
  /** Hash and HMAC digests. */
  hash: number;
}

interface Row {
  name: string;
  kind: Kind;
  stream: boolean;
  proxy: Proxy;
  model: string;
  /** Per request (a WebSocket row: per turn), at 4 chunks a stream. */
  budget: Budget;
  /** What one more stream chunk may add: nothing, except where the bridge must translate each event. */
  perChunk?: Partial<Budget>;
  /** Whether the route may parse the whole request (the bridge translates it); otherwise JSON.parse reads less than it. */
  bridged?: boolean;
}

// The budget, per request. Why each number:
// - parse 1: the answer's usage, read once (rules/protocols/exchange-tokens.ts). Messages streams report usage
//   twice (message_start, message_delta): 2. A bridged route also parses the request to translate it, and a
//   non-stream answer to translate it back: 3; a bridged stream parses each upstream chunk to translate it.
// - stringify 1: the log line. A bridged route adds its translated request (and non-stream, the translated
//   answer): 3; a bridged stream writes each translated event. A chat stream asks for include_usage by
//   splicing `"stream_options":{"include_usage":true}` into the body: 2 stringify calls of those constant names.
// - decode 3: the answer as captured (capture.ts), the request's head for the ring and log (build-record.ts), the
//   system prompt's head for session identity (rules/sessions/session-body.ts, at most 8 KiB). A bridged route adds the
//   request decoded to parse it, the upstream's answer to translate it, the client's side of the capture and the
//   translated request for the ring: 7. Never once per chunk.
// - JSON.parse reads fewer bytes than the request's system prompt (BODY_SYSTEM_BYTES), unless bridged: no whole
//   request, and no whole Responses event (they echo `instructions`), is parsed.
// - hash 3: the local token's constant-time check hashes both sides (rules/access/constant-time.ts), and the session
//   fingerprint hashes the request's opening spans (rules/sessions/conversation-fingerprint.ts). No per-chunk hashing.
// On 1a6fd7e (before issue 40) every row failed: identity parsed and re-serialised each body, each kept stream was
// redacted at record time with one JSON.parse per event, and the chat-stream usage hider decoded every chunk.
const ROWS: Row[] = [
  { name: 'chat', kind: 'chat', stream: false, proxy: 'full', model: 'gpt-4o-mini', budget: b(1, 1, 3, 3) },
  { name: 'chat stream', kind: 'chat', stream: true, proxy: 'full', model: 'gpt-4o-mini', budget: b(1, 3, 3, 3) },
  { name: 'responses', kind: 'responses', stream: false, proxy: 'full', model: 'gpt-4.1', budget: b(1, 1, 3, 3) },
  { name: 'responses stream', kind: 'responses', stream: true, proxy: 'full', model: 'gpt-4.1', budget: b(1, 1, 3, 3) },
  {
    name: 'messages',
    kind: 'messages',
    stream: false,
    proxy: 'claude',
    model: 'claude-haiku-4-5',
    budget: b(1, 1, 3, 3),
  },
  {
    name: 'messages stream',
    kind: 'messages',
    stream: true,
    proxy: 'claude',
    model: 'claude-haiku-4-5',
    budget: b(2, 1, 3, 3),
  },
  {
    name: 'responses bridged to chat',
    kind: 'responses',
    stream: false,
    proxy: 'chatOnly',
    model: 'gpt-4o-mini',
    budget: b(3, 3, 7, 3),
    bridged: true,
  },
  // At 4 chunks the simulator's chat stream has 7 chunks (role, 4 text, finish,
  // usage) and the Responses stream translated from it 12 events.
  {
    name: 'responses stream bridged to chat',
    kind: 'responses',
    stream: true,
    proxy: 'chatOnly',
    model: 'gpt-4o-mini',
    budget: b(2 + 7, 2 + 12, 6, 3),
    perChunk: { parse: 1, stringify: 1 },
    bridged: true,
  },
  {
    name: 'messages bridged to chat',
    kind: 'messages',
    stream: false,
    proxy: 'chatOnly',
    model: 'claude-sonnet-4-6',
    budget: b(3, 3, 7, 3),
    bridged: true,
  },
  // Per turn of one connection, one record each: the turn's usage (the relay reads it from the final message as it
  // passes, since the capture may keep only a head and a tail: 2 usage objects in the simulator's events, so 2
  // parses), that one message decoded, and the turn's capture decoded once for its record: 2 decodes a turn, none a
  // message.
  {
    name: 'websocket (per turn)',
    kind: 'websocket',
    stream: true,
    proxy: 'full',
    model: 'gpt-4.1',
    budget: b(2, 1, 2, 3),
  },
];

function b(parse: number, stringify: number, decode: number, hash: number): Budget {
  return { parse, stringify, decode, hash };
}

// ---------------------------------------------------------------------------------------------------------------
// The counters: installed for a window, removed after it.

interface Counts {
  parse: number;
  parseBytes: number;
  stringify: number;
  stringifyBytes: number;
  decode: number;
  decodeBytes: number;
  hash: number;
  hashBytes: number;
}

const zero = (): Counts => ({
  parse: 0,
  parseBytes: 0,
  stringify: 0,
  stringifyBytes: 0,
  decode: 0,
  decodeBytes: 0,
  hash: 0,
  hashBytes: 0,
});

/**
 * LOOPGATE_BUDGET_TRACE=1: each counted call is also tallied by the proxy's source line that made it,
 * and a row over its budget says where its calls came from.
 */
const TRACE = process.env.LOOPGATE_BUDGET_TRACE === '1';
const sites = new Map<string, number>();

/** Set while a stack is read: the runner's source maps are parsed then, and are not the proxy's. */
let tracing = false;

function site(kind: string): void {
  tracing = true;
  const stack = new Error().stack ?? '';
  tracing = false;
  const frames = stack.split('\n').slice(3);
  const own = frames.find((f) => /\/(proxy|cli)\//.test(f) && !f.includes('request-budget')) ?? frames[0] ?? '?';
  const key = `${kind} ${own
    .trim()
    .replace(/^at /, '')
    .replace(/\(?\/.*?\/(proxy|cli)\//, '$1/')}`;
  sites.set(key, (sites.get(key) ?? 0) + 1);
}

/** The methods of crypto's Hash and Hmac prototypes that are wrapped. */
interface HashMethods {
  update: (this: unknown, ...args: unknown[]) => unknown;
  digest: (this: unknown, ...args: unknown[]) => unknown;
}

function countInWindow(): { stop(): Counts } {
  const c = zero();
  sites.clear();
  const { parse, stringify } = JSON;
  const toString = Buffer.prototype.toString;
  const hashProto = Object.getPrototypeOf(createHash('sha1')) as HashMethods;
  const hmacProto = Object.getPrototypeOf(createHmac('sha256', 'k')) as HashMethods;
  const saved = [hashProto, hmacProto].map((p) => ({ p, update: p.update, digest: p.digest }));
  JSON.parse = function (this: unknown, text: string, reviver?: Parameters<typeof parse>[1]) {
    if (tracing) return parse.call(JSON, text, reviver);
    c.parse++;
    if (TRACE) site('parse');
    c.parseBytes += typeof text === 'string' ? text.length : 0;
    return parse.call(JSON, text, reviver);
  } as typeof JSON.parse;
  JSON.stringify = function (this: unknown, ...args: Parameters<typeof stringify>) {
    const out = stringify.apply(JSON, args);
    if (tracing) return out;
    c.stringify++;
    if (TRACE) site('stringify');
    c.stringifyBytes += typeof out === 'string' ? out.length : 0;
    return out;
  } as typeof JSON.stringify;
  Buffer.prototype.toString = function (this: Buffer, encoding?: BufferEncoding, start?: number, end?: number) {
    const e = encoding?.toLowerCase();
    if (!tracing && (e === undefined || e === 'utf8' || e === 'utf-8')) {
      const bytes = Math.min(end ?? this.length, this.length) - Math.max(start ?? 0, 0);
      c.decodeBytes += bytes;
      if (bytes >= DECODE_MIN) {
        c.decode++;
        if (TRACE) site('decode');
      }
    }
    return toString.call(this, encoding, start, end);
  } as typeof Buffer.prototype.toString;
  // crypto.hash, the one-shot digest, too: the proxy's named imports of it see the wrapper once synced.
  const oneShot = crypto.hash;
  crypto.hash = function (this: unknown, ...args: Parameters<typeof oneShot>) {
    const data = args[1];
    c.hashBytes += typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
    c.hash++;
    if (TRACE) site('hash');
    return oneShot.apply(this, args);
  } as typeof crypto.hash;
  syncBuiltinESMExports();
  for (const { p, update, digest } of saved) {
    p.update = function (this: unknown, ...args: unknown[]) {
      const data = args[0];
      c.hashBytes += typeof data === 'string' ? Buffer.byteLength(data) : (data as Uint8Array).length;
      return update.apply(this, args);
    };
    p.digest = function (this: unknown, ...args: unknown[]) {
      c.hash++;
      if (TRACE) site('hash');
      return digest.apply(this, args);
    };
  }
  return {
    stop() {
      JSON.parse = parse;
      JSON.stringify = stringify;
      Buffer.prototype.toString = toString;
      for (const { p, update, digest } of saved) Object.assign(p, { update, digest });
      crypto.hash = oneShot;
      syncBuiltinESMExports();
      return c;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The stack: the simulator and the clients in child processes, three proxies here.

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const CLIENT = join(__dirname, 'request-budget-client.mjs');
const token = makeCanary('lg-local-budget-');
const keys: Record<Proxy, string> = {
  full: makeCanary('sk-budget-full-'),
  claude: makeCanary('sk-budget-claude-'),
  chatOnly: makeCanary('sk-budget-chat-'),
};
const records: Record<Proxy, TrafficRecord[]> = { full: [], claude: [], chatOnly: [] };
const proxies = {} as Record<Proxy, RunningProxy>;
let simulator: { url: string; stop(): Promise<void> };

/** The same agent-like text every request carries: tool output with a URL escape and an ANSI escape. */
const SYSTEM = (() => {
  const line = 'tool output: fetched https://example.com/a%20b?q=1 \u001b[32mok\u001b[0m and more text to read. ';
  return (
    'You are a coding agent. ' + line.repeat(Math.ceil(BODY_SYSTEM_BYTES / line.length)).slice(0, BODY_SYSTEM_BYTES)
  );
})();

function budgetFixture(): Fixture {
  return {
    groups: {
      ...defaultFixture.groups,
      'default-ws': { ...defaultFixture.groups.default!, responses_websocket: true },
    },
    keys: [
      ...defaultFixture.keys,
      { key: keys.full, group: 'default-ws', status: 'active', balance: 1e9 },
      { key: keys.claude, group: 'claude', status: 'active', balance: 1e9 },
      { key: keys.chatOnly, group: 'chat-only', status: 'active', balance: 1e9 },
    ],
  };
}

async function startSimulatorChild(fixture: Fixture): Promise<typeof simulator> {
  const dir = mkdtempSync(join(tmpdir(), 'lg-budget-'));
  const file = join(dir, 'fixture.json');
  writeFileSync(file, JSON.stringify(fixture));
  const child = spawn(process.execPath, [CLI, 'simulate', '--port', '0', '--fixture', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => (out += d));
  const url = await until(() => /listening on (http:\/\/\S+)/.exec(out)?.[1], 15_000, 'the simulator to listen');
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Runs one client child to its end; its output is kept as bytes (decoded after the window, so not counted). */
function runClient(job: Record<string, unknown>): Promise<{ code: number | null; out: Buffer[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out }));
  });
}

interface Measured {
  counts: Counts;
  perRequest: Record<keyof Counts, number>;
}

/** Runs N requests of a row through its proxy with the counters on, until the proxy has recorded them all. */
async function measure(r: Row, chunks: number): Promise<Measured> {
  const recorded = records[r.proxy];
  const before = recorded.length;
  // A WebSocket connection is recorded when it closes (status 101); an HTTP request when it ends.
  const done = () =>
    r.kind === 'websocket'
      ? recorded.slice(before).some((x) => x.status === 101)
      : recorded.length - before >= N || undefined;
  const counter = countInWindow();
  let result: Awaited<ReturnType<typeof runClient>>;
  let counts: Counts;
  try {
    result = await runClient({
      kind: r.kind,
      stream: r.stream,
      model: r.model,
      url: proxies[r.proxy].url,
      token,
      count: N,
      chunks,
      system: SYSTEM,
    });
    if (result.code === 0) await until(done, 30_000, `${r.name}: the proxy's records`);
  } finally {
    counts = counter.stop();
  }
  expect(result.code, Buffer.concat(result.out).toString('utf8')).toBe(0);
  const failed = recorded.slice(before).filter((x) => x.status >= 400);
  expect(failed.map((x) => `${x.status} ${x.errorCode}`)).toEqual([]);
  const perRequest = Object.fromEntries(
    Object.entries(counts).map(([k, v]) => [k, Math.round((v / N) * 100) / 100]),
  ) as Measured['perRequest'];
  return { counts, perRequest };
}

beforeAll(async () => {
  simulator = await startSimulatorChild(budgetFixture());
  for (const name of ['full', 'claude', 'chatOnly'] as const) {
    proxies[name] = await startProxy({
      upstream: simulator.url,
      key: keys[name],
      token,
      port: 0,
      allowHttp: true,
      logFile: join(mkdtempSync(join(tmpdir(), 'lg-budget-log-')), 'traffic.jsonl'),
      onTraffic: (_line, record) => void records[name].push(record),
    });
    await proxies[name].refreshModels();
  }
}, 30_000);

afterAll(async () => {
  await Promise.all(Object.values(proxies).map((p) => p.close()));
  await simulator?.stop();
});

const report: string[] = [];
afterAll(() => {
  // The figures, for the record (docs/performance.md cites them): one line per row.
  if (report.length) console.log(['request budget, per request:', ...report].join('\n'));
});

function within(m: Measured, r: Row): void {
  const b = r.budget;
  const over = (calls: number, per: number) => calls > per * N + WINDOW_SLACK;
  const c = m.counts;
  const failures: string[] = [];
  if (over(c.parse, b.parse)) failures.push(`JSON.parse ${m.perRequest.parse}/request > ${b.parse}`);
  if (over(c.stringify, b.stringify))
    failures.push(`JSON.stringify ${m.perRequest.stringify}/request > ${b.stringify}`);
  if (over(c.decode, b.decode)) failures.push(`Buffer#toString ${m.perRequest.decode}/request > ${b.decode}`);
  if (over(c.hash, b.hash)) failures.push(`digests ${m.perRequest.hash}/request > ${b.hash}`);
  if (!r.bridged && m.perRequest.parseBytes >= BODY_SYSTEM_BYTES)
    failures.push(`JSON.parse read ${m.perRequest.parseBytes} B/request, more than the system prompt: a whole body`);
  const where = [...sites].sort((x, y) => y[1] - x[1]).map(([k, v]) => `${(v / N).toFixed(2)} ${k}`);
  expect(failures, `${r.name}: ${JSON.stringify(m.perRequest)}${TRACE ? '\n' + where.join('\n') : ''}`).toEqual([]);
}

describe('the budget of one request', () => {
  for (const r of ROWS) {
    it(`${r.name}: within its budget`, async () => {
      const m = await measure(r, 4);
      report.push(`${r.name.padEnd(34)} ${JSON.stringify(m.perRequest)}`);
      within(m, r);
    }, 120_000);
  }

  for (const r of ROWS.filter((x) => x.stream && x.kind !== 'websocket')) {
    it(`${r.name}: costs the same for ${LONG_STREAM} chunks as for ${SHORT_STREAM}`, async () => {
      const short = await measure(r, SHORT_STREAM);
      const long = await measure(r, LONG_STREAM);
      report.push(
        `${(r.name + ' short/long').padEnd(34)} ${JSON.stringify(short.perRequest)} / ${JSON.stringify(long.perRequest)}`,
      );
      // The long stream may cost no more calls than the short one, but for what its row allows per chunk.
      const more = (LONG_STREAM - SHORT_STREAM) * N;
      const grew = (['parse', 'stringify', 'decode', 'hash'] as const).filter(
        (k) => long.counts[k] > short.counts[k] + (r.perChunk?.[k] ?? 0) * more + WINDOW_SLACK,
      );
      expect(grew, `${r.name}: these grew with the chunks`).toEqual([]);
    }, 240_000);
  }
});
