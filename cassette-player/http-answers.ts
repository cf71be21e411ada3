// The player's HTTP answers: a recording replayed (a stream event by event at its recorded times), the /models
// lists, a miss refused in the client's dialect, or (--on-miss) passed on.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CASSETTE_HEADER, CASSETTE_MISS_CODE, type CassetteExchange } from '../core/cassette.js';
import { matchKey } from '../rules/cassettes/cassette-match.js';
import { MISS_STATUS } from './miss-message.js';
import { passModels, passOn } from './pass-on.js';
import { recordedPath, type PassMisses, type PlayerState } from './player-state.js';
import { clientOf, parse, type Sent } from './recordings.js';

const MAX_BODY = 64 * 1024 * 1024;

export async function answerHttp(state: PlayerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  const raw = await readBody(req);
  const text = raw.toString('utf8');
  const body = parse(state.redact ? state.redact(text) : text);
  const method = req.method ?? 'GET';
  const path = recordedPath(state, req.url ?? '/');
  const key = matchKey(method, path, body, state.match);
  const recorded = state.recordings.recorded(key);
  const models = method === 'GET' && path.split('?')[0]!.endsWith('/models');
  // --on-miss: the proxy's keys are those of where misses go (the simulator's demo keys, or the upstream's), so
  // its /models calls go there too, recorded lists or not; they are not traffic: passed on, never recorded.
  if ((!recorded || models) && state.passMisses) {
    if (!models) state.passed.add(key);
    return passMiss(state, state.passMisses, models, req, res, raw);
  }
  if (!recorded && models) return modelsList(state, res);
  if (!recorded) return miss(state, res, { method, path, body, client: clientOf(req.headers, body) });
  // The proxy's start-up lists, one a key when recorded: the replay's one key gets them all, each model once.
  const merged = models && recorded.length > 1 ? mergedLists(recorded) : undefined;
  if (merged) {
    res.writeHead(200, { 'content-type': 'application/json', [CASSETTE_HEADER]: 'replayed' });
    return void res.end(merged);
  }
  await replay(state, res, state.recordings.takeExchange(key)!, started);
}

/** A recorded answer as it came: a body at once, a stream event by event at its recorded times (scaled by speed). */
async function replay(
  state: Pick<PlayerState, 'speed'>,
  res: ServerResponse,
  x: CassetteExchange,
  started: number,
): Promise<void> {
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
    const due = started + e.at * state.speed - performance.now();
    if (due > 1) await new Promise((r) => setTimeout(r, due));
    if (res.destroyed) return;
    res.write(`${e.data}\n\n`);
  }
  res.end();
}

/** --on-miss: a miss passed on; a /models call too, its list given the recorded models it lacks (when asked). */
function passMiss(
  state: Pick<PlayerState, 'recordings'>,
  pass: PassMisses,
  models: boolean,
  req: IncomingMessage,
  res: ServerResponse,
  raw: Buffer,
): void {
  const adding = pass.addRecordedModels;
  if (!models || !adding) return passOn(req, res, raw, pass.siteUrl);
  const added = (listed: ReadonlySet<unknown>) =>
    state.recordings.models().filter((m) => !listed.has(m.id) && adding(m.id));
  passModels(req, res, raw, pass.siteUrl, added);
}

/** The proxy lists each key's models at start: unless that was recorded, the cassette's own models answer. */
function modelsList(state: Pick<PlayerState, 'recordings'>, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', [CASSETTE_HEADER]: 'models' });
  res.end(JSON.stringify({ object: 'list', data: state.recordings.models() }));
}

function miss(state: Pick<PlayerState, 'misses'>, res: ServerResponse, sent: Sent): void {
  const { message, param } = state.misses.missed(sent);
  const anthropic = sent.path.split('?')[0]!.endsWith('/messages');
  // param: where it first differs (the record and `tail` show it); the Anthropic shape carries the code too.
  const payload = anthropic
    ? { type: 'error', error: { type: 'invalid_request_error', code: CASSETTE_MISS_CODE, param, message } }
    : { error: { message, type: 'invalid_request_error', code: CASSETTE_MISS_CODE, param } };
  res.writeHead(MISS_STATUS, { 'content-type': 'application/json', [CASSETTE_HEADER]: 'miss' });
  res.end(JSON.stringify(payload));
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
