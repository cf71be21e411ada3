// A finished request as a cassette exchange (core/cassette.ts), or why it
// cannot be one. Made from the traffic ring's entry, which the redactor has
// already been through. One conversion for every writer: `serve --record`
// (cassette/recorder.ts), `loopgate show ID --save DIR` and the Traffic
// view's Save as Fixture. Pure.
import type { TrafficRecord } from '../../core/record.js';
import type { TrafficEntry } from '../../core/traffic-entry.js';
import {
  CASSETTE_HEADER,
  CASSETTE_MARK,
  CASSETTE_MISS_CODE,
  CASSETTE_VERSION,
  type CassetteExchange,
  type RecordedEvent,
} from '../../core/cassette.js';
import { matchKey, type MatchOptions } from './cassette-match.js';
import { jsonTextDeeperThan } from '../json/nesting.js';

/** Response headers that describe this connection or this proxy's run, not the answer: not recorded. */
const NOT_RECORDED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'date',
  'server-timing',
]);

/** The cassette exchange of a finished request, or why it cannot be one. */
export function exchangeOf(
  rec: Readonly<TrafficRecord>,
  entry: Omit<TrafficEntry, 'seq'>,
  match: MatchOptions,
  now: Date,
): CassetteExchange | { skip: string } {
  if (rec.status === 0 || (rec.clientAborted && !rec.websocket))
    return { skip: 'no complete answer from the upstream' };
  if (entry.requestBodyNote || entry.responseBodyNote)
    return { skip: 'a body was over the 1 MiB the ring keeps, so it cannot be replayed whole' };
  // Neither came from the upstream: a replay must not serve the proxy's own failure as the service's answer.
  if (entry.localAnswer !== undefined)
    return { skip: `Loopgate answered this itself (${entry.localAnswer}), not the upstream` };
  if (rec.fault) return { skip: `the proxy injected this answer (fault ${rec.fault.kind}, --fault), not the upstream` };
  if (isCassetteMiss(rec)) return { skip: 'a cassette miss: the replay answered it, not an upstream' };
  if (rec.websocket) return webSocketExchange(rec, entry, match, now);
  const requestText = entry.upstreamRequestBody ?? entry.requestBody;
  const body = requestText === undefined || requestText === '' ? undefined : parsed(requestText);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(rec.responseHeaders ?? {}))
    if (!NOT_RECORDED.has(name) && !name.startsWith('x-loopgate-')) headers[name] = value;
  const stream = (headers['content-type'] ?? '').startsWith('text/event-stream');
  const response: CassetteExchange['response'] = { status: rec.status, headers };
  const answer = entry.responseBody ?? '';
  if (stream) response.events = eventsOf(answer, entry.eventTimes ?? []);
  else if (answer !== '') response.body = parsed(answer);
  return {
    [CASSETTE_MARK]: CASSETTE_VERSION,
    recorded: now.toISOString(),
    key: matchKey(rec.method, rec.canonicalPath, body, match),
    request: {
      method: rec.method,
      path: rec.canonicalPath,
      // user-agent, originator (Codex): which client made it, so a miss is diffed against the same client's recording.
      headers: pick(rec.requestHeaders ?? {}, [
        'content-type',
        'accept',
        'anthropic-version',
        'anthropic-beta',
        'user-agent',
        'originator',
      ]),
      ...(body === undefined ? {} : { body }),
    },
    response,
  };
}

/**
 * The proxy's own `GET /models` fetch (at start, and when a list goes stale) as an exchange: not traffic, so not
 * in the ring, but what the proxy's routing read. `answer` has been through the redactor already.
 */
export function listExchange(
  path: string,
  answer: { status: number; headers: Record<string, string>; text: string },
  match: MatchOptions,
  now: Date,
): CassetteExchange {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers))
    if (!NOT_RECORDED.has(name) && !name.startsWith('x-loopgate-')) headers[name] = value;
  const response: CassetteExchange['response'] = { status: answer.status, headers };
  if (answer.text !== '') response.body = parsed(answer.text);
  return {
    [CASSETTE_MARK]: CASSETTE_VERSION,
    recorded: now.toISOString(),
    key: matchKey('GET', path, undefined, match),
    request: { method: 'GET', path, headers: {} },
    response,
  };
}

/**
 * A WebSocket connection: every message in the order it went, with its direction and time, from what the ring
 * kept (the client's messages one a line with `messageTimes`, the upstream's as `data:` events with
 * `eventTimes`; both redacted). A replay answers each client `response.create` with the upstream messages
 * that followed it.
 */
function webSocketExchange(
  rec: Readonly<TrafficRecord>,
  entry: Omit<TrafficEntry, 'seq'>,
  match: MatchOptions,
  now: Date,
): CassetteExchange | { skip: string } {
  if (rec.status !== 101) return { skip: 'the WebSocket upgrade was refused: nothing to replay' };
  const sent = (entry.requestBody ?? '').split('\n').filter((l) => l !== '');
  const times = entry.messageTimes ?? [];
  if (sent.length !== times.length)
    return { skip: "the connection's client messages were not all kept (over the log's body cap)" };
  const client: RecordedEvent[] = sent.map((data, i) => ({ at: times[i]!, data, from: 'client' }));
  const upstream: RecordedEvent[] = eventsOf(entry.responseBody ?? '', entry.eventTimes ?? []).map((e) => ({
    at: e.at,
    data: e.data.replace(/^data: /, ''),
    from: 'upstream',
  }));
  // In time order; a client message first when two share a millisecond (it was sent before it was answered).
  const events = [...client, ...upstream].sort((a, b) => a.at - b.at || (a.from === 'client' ? -1 : 1));
  const first = sent[0] === undefined ? undefined : parsed(sent[0]);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(rec.responseHeaders ?? {}))
    if (!NOT_RECORDED.has(name) && !name.startsWith('x-loopgate-') && !name.startsWith('sec-websocket-'))
      headers[name] = value;
  return {
    [CASSETTE_MARK]: CASSETTE_VERSION,
    recorded: now.toISOString(),
    key: matchKey(rec.method, rec.canonicalPath, first, match),
    request: { method: rec.method, path: rec.canonicalPath, headers: { upgrade: 'websocket' } },
    response: { status: 101, headers, events },
  };
}

/**
 * JSON kept as a value when it prints back to the same text (a replay must send the same bytes), else the text;
 * text nested past MAX_NESTING stays text too (nothing could walk or print it; the player reads it the same way).
 */
function parsed(text: string): unknown {
  if (jsonTextDeeperThan(text)) return text;
  try {
    const value: unknown = JSON.parse(text);
    return JSON.stringify(value) === text ? value : text;
  } catch {
    return text;
  }
}

/** A stream's events (split at blank lines, as eventTimes counted them) with each one's time. */
function eventsOf(text: string, times: readonly number[]): RecordedEvent[] {
  const events = text.split(/\r?\n\r?\n/).filter((e) => e.trim() !== '');
  return events.map((data, i) => ({ at: times[i] ?? times.at(-1) ?? 0, data }));
}

function pick(headers: Record<string, string>, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) if (headers[n] !== undefined) out[n] = headers[n];
  return out;
}

/** A request's record says it was a cassette miss (an Anthropic miss carries no code: the replay's header says so). */
export function isCassetteMiss(r: Readonly<Partial<TrafficRecord>>): boolean {
  return (
    r.cassetteMiss !== undefined ||
    r.errorCode === CASSETTE_MISS_CODE ||
    r.diagnosis === 'cassette-miss' ||
    r.responseHeaders?.[CASSETTE_HEADER] === 'miss'
  );
}
