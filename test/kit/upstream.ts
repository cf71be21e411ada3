// The programmable upstream: the real simulator, with rules as data matched before its own answer.
//   const up = await startUpstream();
//   up.on({ path: '/v1/chat/completions', model: 'gpt-4.1' }).reply(503, { error: { message: 'busy' } });
//   up.on({ path: /slow/ }).stream(['data: {"a":1}\n\n'], { delayMs: 20 });
//   up.on({ method: 'GET', path: '/v1/models' }).hang();
//   up.on({ path: '/v1/chat/completions', headers: { 'x-echo': '1' } }).handle((res, _signal, seen) => ...);
// A request no rule matches gets the simulator's normal answer; every request is in `up.requests` (the simulator's
// record), and each rule keeps what it answered (headers as sent, body bytes) in `rule.seen`.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../simulator/index.js';

export interface Match {
  /** The path without its query: exact, or a pattern. */
  path?: string | RegExp;
  method?: string;
  /** The JSON body's `model`. */
  model?: string;
  /** Request headers that must be present with these values (names in lower case). */
  headers?: Record<string, string>;
  /** Answer only this many requests, then let later rules (or the simulator) answer. */
  times?: number;
}

export interface Seen {
  method: string;
  /** With the query. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: Record<string, unknown> | undefined;
}

export interface StreamOptions {
  /** A pause between chunks; 0 writes one chunk per event-loop turn. */
  delayMs?: number;
  status?: number;
  headers?: Record<string, string>;
  /** After the last chunk: end the response (default), keep it open, or destroy the socket. */
  then?: 'end' | 'hang' | 'close';
}

type Chunk = string | Buffer | Record<string, unknown>;
type Answer = (res: ServerResponse, signal: AbortSignal, seen: Seen) => Promise<void> | void;

export interface Rule {
  /** The requests this rule answered, in order. */
  readonly seen: Seen[];
  /** Answer with this status, body (an object is sent as JSON) and headers. */
  reply(status: number, body?: unknown, headers?: Record<string, string>): Rule;
  /** Answer 200 with these chunks (an object is sent as one SSE `data:` event), paced. */
  stream(chunks: readonly Chunk[], opts?: StreamOptions): Rule;
  /** Send nothing until the client goes away. */
  hang(): Rule;
  /** Destroy the connection with no answer. */
  close(): Rule;
  /** Anything else: the test writes the answer. */
  handle(answer: Answer): Rule;
  /** Let the simulator answer, with these headers on its answer (over its own of the same name). */
  headers(headers: Record<string, string>): Rule;
}

export interface Upstream {
  sim: Simulator;
  /** Origin, e.g. http://127.0.0.1:PORT. */
  url: string;
  /** url + '/v1'. */
  baseUrl: string;
  /** Every request received, in order: the simulator's record (credentials fingerprinted). */
  requests: Simulator['requests'];
  on(match: Match): Rule;
  /** Drops every rule (the simulator answers everything again). */
  reset(): void;
  close(): Promise<void>;
}

interface Entry {
  match: Match;
  rule: Rule;
  answer?: Answer;
  /** `.headers()`: the simulator answers, with these on top. */
  extra?: Record<string, string>;
  used: number;
}

function sse(chunk: Chunk): string | Buffer {
  return typeof chunk === 'string' || Buffer.isBuffer(chunk) ? chunk : `data: ${JSON.stringify(chunk)}\n\n`;
}

function parseJson(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

function write(res: ServerResponse, data: string | Buffer): Promise<void> {
  return new Promise((resolve) => (res.destroyed ? resolve() : res.write(data, () => resolve())));
}

function makeRule(entry: Omit<Entry, 'rule'>): Rule {
  const seen: Seen[] = [];
  const set = (answer: Answer): Rule => {
    entry.answer = answer;
    return rule;
  };
  const rule: Rule = {
    seen,
    reply: (status, body, headers = {}) =>
      set((res) => {
        const text =
          body === undefined ? '' : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
        const type = typeof body === 'object' && !Buffer.isBuffer(body) ? { 'content-type': 'application/json' } : {};
        res.writeHead(status, { ...type, 'content-length': String(Buffer.byteLength(text)), ...headers });
        res.end(text);
      }),
    stream: (chunks, opts = {}) =>
      set(async (res, signal) => {
        res.writeHead(opts.status ?? 200, { 'content-type': 'text/event-stream', ...opts.headers });
        res.flushHeaders();
        for (const [i, chunk] of chunks.entries()) {
          if (i > 0) {
            if (opts.delayMs) await delay(opts.delayMs, undefined, { signal }).catch(() => undefined);
            else await new Promise((r) => setImmediate(r));
          }
          if (signal.aborted) return;
          await write(res, sse(chunk));
        }
        if (opts.then === 'hang') return untilAborted(signal);
        if (opts.then === 'close') return void res.socket?.destroy();
        res.end();
      }),
    hang: () => set((_res, signal) => untilAborted(signal)),
    close: () => set((res) => void res.socket?.destroy()),
    handle: (answer) => set(answer),
    headers: (headers) => {
      entry.extra = headers;
      return rule;
    },
  };
  return rule;
}

type Head = (
  status: number,
  headers: Record<string, unknown> | undefined,
) => [number, Record<string, unknown> | undefined];

/** Sees (and may change) the status and headers as the response's head is written. */
function onHead(res: ServerResponse, change: Head): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: Record<string, unknown>) => ServerResponse;
  res.writeHead = ((status: number, headers?: Record<string, unknown>) =>
    writeHead(...change(status, headers))) as ServerResponse['writeHead'];
}

function pathMatches(want: Match['path'], path: string): boolean {
  if (want === undefined) return true;
  return typeof want === 'string' ? want === path : want.test(path);
}

/** A simulator on port 0 (with `opts`, e.g. a fixture) whose rules answer first. */
export async function startUpstream(opts: Omit<SimulatorOptions, 'intercept'> = {}): Promise<Upstream> {
  const entries: Entry[] = [];
  const intercept = async (
    req: IncomingMessage,
    res: ServerResponse,
    rec: Simulator['requests'][number],
    body: () => Promise<Buffer>,
    signal: AbortSignal,
  ): Promise<boolean> => {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0]!;
    const live = entries.filter(
      (e) =>
        (e.answer || e.extra) &&
        (e.match.times === undefined || e.used < e.match.times) &&
        (e.match.method === undefined || e.match.method === method) &&
        Object.entries(e.match.headers ?? {}).every(([name, value]) => req.headers[name] === value) &&
        pathMatches(e.match.path, path),
    );
    if (live.length === 0) return false;
    const bytes = live.some((e) => e.match.model !== undefined) || method !== 'GET' ? await body() : Buffer.alloc(0);
    const json = parseJson(bytes);
    const entry = live.find((e) => e.match.model === undefined || json?.model === e.match.model);
    if (!entry) return false;
    entry.used++;
    const seen: Seen = { method, path: req.url ?? '/', headers: req.headers, body: bytes, json };
    entry.rule.seen.push(seen);
    if (entry.extra) {
      onHead(res, (status, headers) => [status, { ...headers, ...entry.extra }]);
      return false;
    }
    // The record's status is the one the rule sent (0 while none is: a hang, a close).
    onHead(res, (status, headers) => ((rec.status = status), [status, headers]));
    await entry.answer!(res, signal, seen);
    return true;
  };
  const sim = await startSimulator({ ...opts, intercept });
  return {
    sim,
    url: sim.url,
    baseUrl: sim.baseUrl,
    requests: sim.requests,
    on(match) {
      const entry = { match, used: 0 } as Entry;
      entry.rule = makeRule(entry);
      entries.push(entry);
      return entry.rule;
    },
    reset() {
      entries.length = 0;
    },
    close: () => sim.close(),
  };
}
