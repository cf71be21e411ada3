// The traffic ring over HTTP, under the same guards and local token as every
// /_loopgate/ endpoint (a web page on the machine must not read the user's
// prompts: mitmweb's unauthenticated UI, CVE-2025-23217, is the cautionary tale).
//   GET /_loopgate/traffic            newest first: { capture, entries: [{ seq, record }] } (?after=SEQ&limit=N&rows=1);
//                                     ?q=TEXT keeps the entries whose bodies hold TEXT (the view's filter)
//   GET /_loopgate/traffic/live       text/event-stream: one `data:` line per new entry ({ seq, record });
//                                     ?rows=1 sends only the fields a list row shows (the Traffic view);
//                                     ?inFlight=1 adds { inFlight } lines for requests under way (in-flight.ts)
//   GET /_loopgate/traffic/<id|seq>   one entry whole: record, bodies, stream event times, the cache outcome
//                                     and the context breakdown (worked out on this query), and
//                                     followUps: the later requests that carried its tool calls' results
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import type { ProxyContext } from './context.js';
import type { IncomingMessage } from 'node:http';
import type { PathFacts } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import type { ReaderScope } from './reader-scope.js';
import type { TrafficRing } from '../traffic/ring.js';
import { followUps } from '../../rules/wire/follow-ups.js';
import { previousTurn } from '../traffic/previous-turn.js';
import { analyseTurn } from '../../analysis/turn-analysis.js';
import { sessionWithRetries } from './session-endpoints.js';
import {
  LOCAL_ERROR_CODES,
  LOCAL_PATHS,
  ROW_FIELDS,
  type RowRecord,
  type LiveEvent,
  type TrafficDetail,
  type TrafficListAnswer,
  type TrafficRow,
  type TrafficSummary,
  type InFlightEvent,
} from '../../core/local-api.js';
import { type TrafficEntry } from '../../core/traffic-entry.js';

const TRAFFIC_PATH = LOCAL_PATHS.traffic;
/** A live client that stops reading loses entries past this much unsent data (counted), rather than the proxy's memory. */
const LIVE_BACKLOG_BYTES = 4 * 1024 * 1024;
/** A comment line this often keeps idle connections (and anything between) from timing out. */
const KEEPALIVE_MS = 15_000;
/** A filter longer than this is cut: nobody types more, and the scan stays cheap. */
const MAX_SEARCH_CHARS = 200;

export function isTrafficEndpoint(path: string): boolean {
  return path === TRAFFIC_PATH || path.startsWith(TRAFFIC_PATH + '/');
}

/** The summary a list or the live feed carries: the record without bodies. */
function summary(e: TrafficEntry): TrafficSummary {
  return { seq: e.seq, record: e.record };
}

function ringOf(ctx: ProxyContext): TrafficRing {
  if (!ctx.ring)
    throw new ProxyError(
      404,
      LOCAL_ERROR_CODES.captureOff,
      'This proxy runs with traffic capture off (--no-capture, or loopgate.traffic.capture false): there is nothing to show. The traffic log still has the metadata.',
    );
  return ctx.ring;
}

function intParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw new ProxyError(400, LOCAL_ERROR_CODES.badQuery, `${name} must be a whole number.`);
  return Number(raw);
}

export async function handleTraffic(
  req: IncomingMessage,
  paths: PathFacts,
  reply: ClientReply,
  ctx: ProxyContext,
  scope?: ReaderScope,
): Promise<void> {
  if (req.method !== 'GET')
    throw new ProxyError(405, LOCAL_ERROR_CODES.methodNotAllowed, `${TRAFFIC_PATH} is read with GET.`, {
      allow: 'GET',
    });
  const ring = ringOf(ctx);
  const query = new URLSearchParams(paths.query.replace(/^\?/, ''));
  const rest = paths.path.slice(TRAFFIC_PATH.length + 1);
  if (paths.path === TRAFFIC_PATH) {
    const q = query.get('q');
    const opts = { after: intParam(query, 'after'), limit: intParam(query, 'limit') };
    // A run's credential: its own sessions' entries, the limit counted among them.
    const seen = scope ? { after: opts.after } : opts;
    let found = q ? ring.search(q.slice(0, MAX_SEARCH_CHARS), seen) : ring.list(seen);
    if (scope) found = found.filter((e) => scope.sees(e.record.session?.id)).slice(0, opts.limit);
    const entries = found.map(query.get('rows') === '1' ? row : summary);
    return reply.answer(
      200,
      'application/json',
      JSON.stringify({ capture: ring.stats(), entries } satisfies TrafficListAnswer<TrafficSummary | TrafficRow>),
    );
  }
  if (rest === 'live')
    return live(reply, ring, intParam(query, 'after'), query.get('rows') === '1', query.get('inFlight') === '1');
  let id: string;
  try {
    id = decodeURIComponent(rest);
  } catch {
    throw new ProxyError(
      400,
      LOCAL_ERROR_CODES.badRequestId,
      'The request id in the path is not valid percent-encoding.',
    );
  }
  const held = ring.get(id);
  const entry = held && (!scope || scope.sees(held.record.session?.id)) ? held : undefined;
  if (!entry) {
    throw new ProxyError(
      404,
      LOCAL_ERROR_CODES.unknownRequest,
      `No request ${rest.slice(0, 80)} in the traffic ring: it keeps the last ${ring.limits.entries} requests (${Math.round(ring.limits.bytes / 1048576)} MB at most), and only since the proxy started.`,
    );
  }
  // Oldest first: the first later request that answers a call is the one that carried its result.
  // The cache outcome and the context are worked out here, on the query, never on the request path (memoised per entry).
  const { cache, context } = await analyseTurn(entry, previousTurn(ring, ctx.sessions, entry));
  const sessionId = entry.record.session?.id;
  const answer = {
    // The bodies are redacted now, as they are read (ring-entry.ts).
    ...entry.toJSON(),
    followUps: followUps(
      entry,
      ring
        .list({ after: entry.seq })
        .filter((e) => !scope || scope.sees(e.record.session?.id))
        .reverse(),
    ),
    session: sessionId === undefined ? undefined : sessionWithRetries(ctx, sessionId),
    ...(cache ? { cache } : {}),
    ...(context ? { context } : {}),
  } satisfies TrafficDetail;
  reply.answer(200, 'application/json', JSON.stringify(answer));
}

/** How long new entries gather before one write to a live client: fewer writes at high rates, no visible delay. */
const LIVE_BATCH_MS = 25;

/** Only the fields a list row shows (ROW_FIELDS, the contract's): the Traffic view fetches the whole entry when a row is opened. */
function row(e: TrafficEntry): TrafficRow {
  const record: Partial<Record<keyof RowRecord, unknown>> = {};
  for (const f of ROW_FIELDS) if (e.record[f] !== undefined) record[f] = e.record[f];
  // Every field of the row is copied from a record that has it: the row's required fields are there.
  return { seq: e.seq, record: record as RowRecord };
}

/** Each entry's live line, per shape: serialised once however many readers follow the feed. */
const liveLines = new WeakMap<TrafficEntry, { row?: string; summary?: string }>();

function liveLine(e: TrafficEntry, rows: boolean): string {
  let lines = liveLines.get(e);
  if (!lines) liveLines.set(e, (lines = {}));
  return rows ? (lines.row ??= JSON.stringify(row(e))) : (lines.summary ??= JSON.stringify(summary(e)));
}

/**
 * A long-lived event stream of new entries (after `after`, if given, first),
 * until the client leaves. `rows` sends only the fields a list row shows (ROW_FIELDS).
 */
function live(
  reply: ClientReply,
  ring: TrafficRing,
  after: number | undefined,
  rows: boolean,
  inFlight: boolean,
): Promise<void> {
  reply.head(200, { 'content-type': 'text/event-stream; charset=utf-8' }, { stream: true });
  const shape = rows ? row : summary;
  let skipped = 0;
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (pending && !reply.clientGone) reply.send(pending);
    pending = '';
  };
  const push = (e: TrafficEntry) => {
    if (reply.clientGone) return;
    if (reply.backlog > LIVE_BACKLOG_BYTES) {
      skipped++;
      return;
    }
    const data = skipped
      ? JSON.stringify({ ...shape(e), skipped } satisfies LiveEvent<TrafficSummary | TrafficRow>)
      : liveLine(e, rows);
    skipped = 0;
    pending += `data: ${data}\n\n`;
    timer ??= setTimeout(flush, LIVE_BATCH_MS);
  };
  if (after !== undefined) for (const e of ring.list({ after }).reverse()) push(e);
  // A first comment tells the client the feed is open (nothing may happen for a while).
  pending += ': loopgate traffic feed\n\n';
  flush();
  const unsubscribe = ring.subscribe(push);
  // Requests under way (?inFlight=1): small, and dropped first when the reader falls behind.
  const unsubscribeInFlight = inFlight
    ? ring.subscribeInFlight((request) => {
        if (reply.clientGone || reply.backlog > LIVE_BACKLOG_BYTES) return;
        pending += `data: ${JSON.stringify({ inFlight: request } satisfies InFlightEvent)}\n\n`;
        timer ??= setTimeout(flush, LIVE_BATCH_MS);
      })
    : undefined;
  const keepAlive = setInterval(() => reply.send(': keep-alive\n\n'), KEEPALIVE_MS);
  keepAlive.unref();
  return new Promise((resolve) => {
    reply.onClose(() => {
      unsubscribe();
      unsubscribeInFlight?.();
      clearInterval(keepAlive);
      clearTimeout(timer);
      resolve();
    });
  });
}
