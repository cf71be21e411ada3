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
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { CASSETTE_HEADER, CASSETTE_MISS_CODE, type CassetteExchange, type RecordedEvent } from '../core/cassette.js';
import { matchKey, nearestRecording, type Difference, type MatchOptions } from '../rules/cassettes/cassette-match.js';
import { jsonTextDeeperThan } from '../rules/json/nesting.js';
import { identifySession } from '../rules/sessions/session-identity.js';

/** The code a miss answers with (error.code / error.type), and the header that marks it for the proxy's record. */
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
   * taken off to match, kept when passed on. `addRecordedModels` (the simulator behind): its model lists also
   * name the recorded models this says yes to, those the demo does not answer at all, or the proxy would refuse a
   * recorded request for one before the cassette could answer it. (A model of a demo family is left out: the
   * proxy already routes it to the key of its family, whose simulator answers a new request for it.)
   */
  passMisses?: { siteUrl: string; prefix: string; addRecordedModels?: (id: string) => boolean };
}

export interface CassetteMiss {
  method: string;
  path: string;
  /** The client that sent it (rules/sessions/session-identity.ts: its User-Agent, else its body), when known. */
  client?: string;
  /**
   * The nearest recording's request path and the first differences, when one has the same method and path; the
   * same client's recording when there is one (`sameClient`).
   */
  nearest?: { path: string; differences: Difference[]; sameClient: boolean };
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
  // Each recorded request with the client that made it: a miss is diffed against the same client's recording.
  const requests: Array<{ method: string; path: string; body: unknown; client?: string }> = [];
  // WebSocket recordings, as turns: a client `response.create` and the upstream messages that followed it.
  const turns = new Map<string, { list: RecordedEvent[][]; next: number }>();
  const webSocketPaths = new Set<string>();
  const addWebSocket = (x: CassetteExchange) => {
    webSocketPaths.add(x.request.path.split('?')[0]!);
    let turn: RecordedEvent[] | undefined;
    let sentAt = 0;
    for (const e of x.response.events ?? []) {
      if (e.from === 'client') {
        const body = parse(e.data);
        if (!isCreate(body)) continue;
        const key = matchKey(WS_METHOD, x.request.path, body, opts.match);
        const slot = turns.get(key) ?? { list: [], next: 0 };
        slot.list.push((turn = []));
        turns.set(key, slot);
        sentAt = e.at;
        requests.push({ method: WS_METHOD, path: x.request.path, body });
      } else if (turn) turn.push({ at: e.at - sentAt, data: e.data });
    }
  };
  const add = (x: CassetteExchange) => {
    if (x.response.status === 101) return addWebSocket(x);
    // Keyed again with this run's match options: ignore paths added since the recording apply to it too.
    const key = matchKey(x.request.method, x.request.path, x.request.body, opts.match);
    const slot = byKey.get(key) ?? { list: [], next: 0 };
    slot.list.push(x);
    byKey.set(key, slot);
    const client = clientOf(x.request.headers, x.request.body);
    requests.push({
      method: x.request.method,
      path: x.request.path,
      body: x.request.body,
      ...(client ? { client } : {}),
    });
  };
  for (const x of opts.exchanges) add(x);
  const sockets = new WebSocketServer({ noServer: true });
  const passed = new Set<string>();
  const prefix = opts.passMisses?.prefix ?? '';
  const state = { misses: 0 };
  const server: Server = createServer((req, res) => {
    void answer(req, res).catch(() => res.destroy());
  });
  // A cassette without WebSocket recordings for the path refuses the upgrade as a route without the transport
  // does (426): the client goes on over HTTP, which the cassette does hold.
  server.on('upgrade', (req: IncomingMessage, socket, head: Buffer) => {
    const sentPath = req.url ?? '/';
    const path = prefix && sentPath.startsWith(prefix) ? sentPath.slice(prefix.length) || '/' : sentPath;
    if (!webSocketPaths.has(path.split('?')[0]!)) {
      socket.end('HTTP/1.1 426 Upgrade Required\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(req, socket, head, (ws) => replayWebSocket(ws, path));
  });

  /** Each `response.create` answered in turn, its messages at their recorded times after it (scaled by speed). */
  function replayWebSocket(ws: WebSocket, path: string): void {
    let queue = Promise.resolve();
    ws.on('message', (data: RawData, isBinary: boolean) => {
      const at = performance.now();
      if (isBinary) return;
      const text = (Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer)).toString('utf8');
      queue = queue.then(() => answerMessage(ws, path, text, at)).catch(() => ws.terminate());
    });
    ws.on('error', () => undefined);
  }

  async function answerMessage(ws: WebSocket, path: string, text: string, at: number): Promise<void> {
    const body = parse(opts.redact ? opts.redact(text) : text);
    if (!isCreate(body)) return;
    const slot = turns.get(matchKey(WS_METHOD, path, body, opts.match));
    if (!slot) {
      // The Responses WebSocket's own error event, as the service sends one (Codex shows its message).
      const { message, param } = missed({ method: WS_METHOD, path, body });
      const error = { type: 'invalid_request_error', code: CASSETTE_MISS_CODE, param, message };
      ws.send(JSON.stringify({ type: 'error', status: MISS_STATUS, error }));
      return;
    }
    const turn = slot.list[Math.min(slot.next, slot.list.length - 1)]!;
    slot.next++;
    for (const e of turn) {
      const due = at + e.at * opts.speed - performance.now();
      if (due > 1) await new Promise((r) => setTimeout(r, due));
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(e.data);
    }
  }

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
    // --on-miss: the proxy's keys are those of where misses go (the simulator's demo keys, or the upstream's), so
    // its /models calls go there too, recorded lists or not; they are not traffic: passed on, never recorded.
    if ((!slot || models) && opts.passMisses) {
      if (!models) passed.add(key);
      const adding = opts.passMisses.addRecordedModels;
      if (models && adding) return passModels(req, res, raw, opts.passMisses.siteUrl, adding);
      return passOn(req, res, raw, opts.passMisses.siteUrl);
    }
    if (!slot && models) return modelsList(res);
    if (!slot) return miss(res, { method, path, body, client: clientOf(req.headers, body) });
    // The proxy's start-up lists, one a key when recorded: the replay's one key gets them all, each model once.
    const merged = models && slot.list.length > 1 ? mergedLists(slot.list) : undefined;
    if (merged) {
      res.writeHead(200, { 'content-type': 'application/json', [CASSETTE_HEADER]: 'replayed' });
      return void res.end(merged);
    }
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

  /** A miss sent on as it came, to `siteUrl`; `onAnswer` gets the upstream's answer, and a failure either way ends both. */
  function sendOn(
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    siteUrl: string,
    onAnswer: (up: IncomingMessage) => void,
  ): void {
    const site = new URL(siteUrl);
    const target = new URL(req.url ?? '/', site.origin);
    const headers = { ...req.headers, host: site.host, 'content-length': String(body.length) };
    delete headers['transfer-encoding'];
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const out = send(target, { method: req.method, headers }, onAnswer);
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    out.end(body);
  }

  /** A miss passed on; the answer streams back as it arrives (its timing is the upstream's). */
  function passOn(req: IncomingMessage, res: ServerResponse, body: Buffer, siteUrl: string): void {
    sendOn(req, res, body, siteUrl, (up) => {
      res.writeHead(up.statusCode ?? 502, { ...up.headers, [CASSETTE_HEADER]: 'passed' });
      up.pipe(res);
    });
  }

  function recordedModels(): Array<{ id: string; object: 'model'; created: 0; owned_by: 'cassette' }> {
    const ids = new Set<string>();
    for (const r of requests) {
      const model = (r.body as { model?: unknown } | undefined)?.model;
      if (typeof model === 'string') ids.add(model);
    }
    return [...ids].map((id) => ({ id, object: 'model', created: 0, owned_by: 'cassette' }));
  }

  /** The proxy lists each key's models at start: unless that was recorded, the cassette's own models answer. */
  function modelsList(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json', [CASSETTE_HEADER]: 'models' });
    res.end(JSON.stringify({ object: 'list', data: recordedModels() }));
  }

  /** The upstream's model list with the recorded models it lacks added; any other answer (a refused key) as it came. */
  function passModels(
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    siteUrl: string,
    adding: (id: string) => boolean,
  ): void {
    sendOn(req, res, body, siteUrl, (up) => {
      const chunks: Buffer[] = [];
      up.on('data', (c: Buffer) => chunks.push(c));
      up.on('error', () => res.destroy());
      up.on('end', () => {
        const raw = Buffer.concat(chunks);
        let list: { data?: unknown } | undefined;
        try {
          list = up.headers['content-encoding'] ? undefined : (JSON.parse(raw.toString('utf8')) as { data?: unknown });
        } catch {
          list = undefined;
        }
        if (up.statusCode !== 200 || !list || !Array.isArray(list.data)) {
          res.writeHead(up.statusCode ?? 502, { ...up.headers, [CASSETTE_HEADER]: 'passed' });
          return void res.end(raw);
        }
        const listed = new Set(list.data.map((m) => (m as { id?: unknown }).id));
        const added = recordedModels().filter((m) => !listed.has(m.id) && adding(m.id));
        const merged = JSON.stringify({ ...list, data: [...list.data, ...added] });
        const { 'content-length': _length, 'transfer-encoding': _te, ...rest } = up.headers;
        res.writeHead(200, {
          ...rest,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(merged)),
          [CASSETTE_HEADER]: 'models',
        });
        res.end(merged);
      });
    });
  }

  /** Counts and reports a miss; its message and first differing path. */
  function missed(sent: Sent): { message: string; param: string | null } {
    state.misses++;
    const near = nearestRecording(sent, requests, opts.match);
    const report: CassetteMiss = { method: sent.method, path: sent.path };
    if (sent.client) report.client = sent.client;
    if (near)
      report.nearest = {
        path: near.recording.path,
        differences: near.differences,
        sameClient: sent.client !== undefined && near.recording.client === sent.client,
      };
    opts.onMiss?.(report);
    return { message: missMessage(report), param: report.nearest?.differences[0]?.path || null };
  }

  function miss(res: ServerResponse, sent: Sent): void {
    const { message, param } = missed(sent);
    const anthropic = sent.path.split('?')[0]!.endsWith('/messages');
    // param: where it first differs (the record and `tail` show it); the Anthropic shape carries the code too.
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
        for (const ws of sockets.clients) ws.terminate();
        sockets.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a miss says: the request, and where it differs from the nearest recording (or that none is near). */
export function missMessage(m: CassetteMiss): string {
  const what =
    m.method === WS_METHOD
      ? `a response.create on the WebSocket ${m.path.split('?')[0]}`
      : `${m.method} ${m.path.split('?')[0]}`;
  const head = `Loopgate replay: no recording matches ${what} (${CASSETTE_MISS_CODE}); nothing was sent upstream.`;
  if (!m.nearest)
    return `${head} The cassette has nothing for ${what}. Record it with \`loopgate serve --record DIR\`.`;
  const lines = m.nearest.differences.map((d) => `  ${d.path || '(body)'}: recorded ${d.recorded}, sent ${d.sent}`);
  const whose = m.nearest.sameClient ? ` of ${m.client}` : m.client ? ` (none from ${m.client}: another client's)` : '';
  return `${head} The nearest recording${whose} differs at:\n${lines.join('\n')}\nRecord again, or add the path to the match's ignore list if it varies between runs.`;
}

/** Recorded /models answers as one list, each id once, in the order first seen; undefined unless all are lists. */
function mergedLists(list: readonly CassetteExchange[]): string | undefined {
  const seen = new Set<unknown>();
  const data: unknown[] = [];
  for (const x of list) {
    const body = x.response.body as { data?: unknown } | undefined;
    if (x.response.status !== 200 || !body || !Array.isArray(body.data)) return undefined;
    for (const m of body.data as unknown[]) {
      const id = (m as { id?: unknown } | null)?.id;
      if (seen.has(id)) continue;
      seen.add(id);
      data.push(m);
    }
  }
  return JSON.stringify({ object: 'list', data });
}

interface Sent {
  method: string;
  path: string;
  body: unknown;
  client?: string;
}

/**
 * The client family a request came from (claude-code, codex, anthropic-sdk, …), as the session book names it;
 * undefined when nothing tells (a recording made before cassettes kept the User-Agent).
 */
function clientOf(headers: Record<string, string | string[] | undefined>, body: unknown): string | undefined {
  const object = typeof body === 'object' && body !== null && !Array.isArray(body);
  const client = identifySession(headers, object ? (body as Record<string, unknown>) : undefined).client;
  return client === 'unknown' ? undefined : client;
}

/** A WebSocket turn is keyed under this method: a message, not an HTTP request, on the path. */
const WS_METHOD = 'WEBSOCKET';

function isCreate(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { type?: unknown }).type === 'response.create';
}

/** JSON as a value; text that is not JSON, or nested past MAX_NESTING (as the recorder keeps it), as the text. */
function parse(text: string): unknown {
  if (text === '') return undefined;
  if (jsonTextDeeperThan(text)) return text;
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
