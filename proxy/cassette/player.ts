// `loopgate serve --replay DIR` (issue 34 §1): a server on 127.0.0.1 that
// answers as the upstream did, from a cassette. The proxy stands in front of it
// unchanged, so every client, the Traffic view and the log work as they do
// against a real service. Streams are played event by event at their recorded
// times (scaled by `speed`; 0 plays them at once). A request with no recording
// is never sent anywhere: it gets a loud error in its own protocol's dialect,
// with what differs from the nearest recording. Like the simulator, it is its
// own server.
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { CassetteExchange } from '../core/cassette.js';
import { matchKey, nearestRecording, type Difference, type MatchOptions } from '../rules/cassette-match.js';

/** The code a miss answers with (error.code / error.type), and the header that marks it for the proxy's record. */
const CASSETTE_MISS_CODE = 'cassette_miss';
const CASSETTE_HEADER = 'x-loopgate-cassette';
/** A miss's status: a client error no client retries, and not one the proxy reads as "route lacks the protocol". */
const MISS_STATUS = 400;
const MAX_BODY = 64 * 1024 * 1024;

export interface PlayerOptions {
  exchanges: readonly CassetteExchange[];
  /** Multiplies the recorded times: 1 as recorded, 0 as fast as possible. */
  speed: number;
  match?: MatchOptions;
  /** What the redactor does to a body before it is keyed: recordings were keyed after redaction. */
  redact?: (text: string) => string;
  /** Called for every miss (the console line, the count). */
  onMiss?: (miss: CassetteMiss) => void;
  /**
   * --on-miss record|simulate: a miss is passed on, unchanged (the proxy's key included), to this upstream
   * instead of refused. Its path prefix (`/api` of https://host/api) is what the proxy puts before each path:
   * taken off to match, kept when passed on.
   */
  passMisses?: { siteUrl: string; prefix: string };
}

export interface CassetteMiss {
  method: string;
  path: string;
  /** The nearest recording's request path and the first differences, when one has the same method and path. */
  nearest?: { path: string; differences: Difference[] };
}

export interface CassettePlayer {
  url: string;
  misses: number;
  /** --on-miss record: true once for each key whose miss was passed on (so only those are recorded). */
  takePassed(key: string): boolean;
  /** A recording made while playing (--on-miss record): the same request is answered from it from now on. */
  add(exchange: CassetteExchange): void;
  close(): Promise<void>;
}

export async function startPlayer(opts: PlayerOptions, port = 0): Promise<CassettePlayer> {
  // Repeated identical requests get the recordings in order; past the last, the last again.
  const byKey = new Map<string, { list: CassetteExchange[]; next: number }>();
  const requests: Array<{ method: string; path: string; body: unknown }> = [];
  const add = (x: CassetteExchange) => {
    // Keyed again with this run's match options: ignore paths added since the recording apply to it too.
    const key = matchKey(x.request.method, x.request.path, x.request.body, opts.match);
    const slot = byKey.get(key) ?? { list: [], next: 0 };
    slot.list.push(x);
    byKey.set(key, slot);
    requests.push({ method: x.request.method, path: x.request.path, body: x.request.body });
  };
  for (const x of opts.exchanges) add(x);
  const passed = new Set<string>();
  const prefix = opts.passMisses?.prefix ?? '';
  const state = { misses: 0 };
  const server: Server = createServer((req, res) => {
    void answer(req, res).catch(() => res.destroy());
  });

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const raw = await readBody(req);
    const text = raw.toString('utf8');
    const body = parse(opts.redact ? opts.redact(text) : text);
    const method = req.method ?? 'GET';
    const sentPath = req.url ?? '/';
    const path = prefix && sentPath.startsWith(prefix) ? sentPath.slice(prefix.length) || '/' : sentPath;
    const key = matchKey(method, path, body, opts.match);
    const slot = byKey.get(key);
    const models = method === 'GET' && path.split('?')[0]!.endsWith('/models');
    if (!slot && opts.passMisses) {
      // The proxy's own /models calls are not traffic: passed on, never recorded.
      if (!models) passed.add(key);
      return passOn(req, res, raw, opts.passMisses.siteUrl);
    }
    if (!slot && models) return modelsList(res);
    if (!slot) return miss(res, { method, path, body });
    const x = slot.list[Math.min(slot.next, slot.list.length - 1)]!;
    slot.next++;
    const headers = { ...x.response.headers, [CASSETTE_HEADER]: 'replayed' };
    const events = x.response.events;
    if (!events) {
      const out = typeof x.response.body === 'string' ? x.response.body : JSON.stringify(x.response.body ?? '');
      res.writeHead(x.response.status, headers);
      res.end(x.response.body === undefined ? '' : out);
      return;
    }
    res.writeHead(x.response.status, headers);
    for (const e of events) {
      const due = started + e.at * opts.speed - performance.now();
      if (due > 1) await new Promise((r) => setTimeout(r, due));
      if (res.destroyed) return;
      res.write(`${e.data}\n\n`);
    }
    res.end();
  }

  /** A miss sent on as it came; the answer streams back as it arrives (its timing is the upstream's). */
  function passOn(req: IncomingMessage, res: ServerResponse, body: Buffer, siteUrl: string): void {
    const site = new URL(siteUrl);
    const target = new URL(req.url ?? '/', site.origin);
    const headers = { ...req.headers, host: site.host, 'content-length': String(body.length) };
    delete headers['transfer-encoding'];
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const out = send(target, { method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, { ...up.headers, [CASSETTE_HEADER]: 'passed' });
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    out.end(body);
  }

  /** The proxy lists each key's models at start: unless that was recorded, the cassette's own models answer. */
  function modelsList(res: ServerResponse): void {
    const ids = new Set<string>();
    for (const r of requests) {
      const model = (r.body as { model?: unknown } | undefined)?.model;
      if (typeof model === 'string') ids.add(model);
    }
    const data = [...ids].map((id) => ({ id, object: 'model', created: 0, owned_by: 'cassette' }));
    res.writeHead(200, { 'content-type': 'application/json', [CASSETTE_HEADER]: 'models' });
    res.end(JSON.stringify({ object: 'list', data }));
  }

  function miss(res: ServerResponse, sent: { method: string; path: string; body: unknown }): void {
    state.misses++;
    const near = nearestRecording(sent, requests, opts.match);
    const report: CassetteMiss = { method: sent.method, path: sent.path };
    if (near) report.nearest = { path: near.recording.path, differences: near.differences };
    opts.onMiss?.(report);
    const message = missMessage(report);
    const anthropic = sent.path.split('?')[0]!.endsWith('/messages');
    // param: where it first differs (the record and `tail` show it); the Anthropic shape carries the code too.
    const param = report.nearest?.differences[0]?.path || null;
    const payload = anthropic
      ? { type: 'error', error: { type: 'invalid_request_error', code: CASSETTE_MISS_CODE, param, message } }
      : { error: { message, type: 'invalid_request_error', code: CASSETTE_MISS_CODE, param } };
    res.writeHead(MISS_STATUS, { 'content-type': 'application/json', [CASSETTE_HEADER]: 'miss' });
    res.end(JSON.stringify(payload));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    get misses() {
      return state.misses;
    },
    takePassed: (key) => passed.delete(key),
    add,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a miss says: the request, and where it differs from the nearest recording (or that none is near). */
export function missMessage(m: CassetteMiss): string {
  const head = `Loopgate replay: no recording matches ${m.method} ${m.path.split('?')[0]} (${CASSETTE_MISS_CODE}); nothing was sent upstream.`;
  if (!m.nearest)
    return `${head} The cassette has no ${m.method} ${m.path.split('?')[0]} at all. Record it with \`loopgate serve --record DIR\`.`;
  const lines = m.nearest.differences.map((d) => `  ${d.path || '(body)'}: recorded ${d.recorded}, sent ${d.sent}`);
  return `${head} The nearest recording differs at:\n${lines.join('\n')}\nRecord again, or add the path to the match's ignore list if it varies between runs.`;
}

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new Error('request body over the replay limit');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
