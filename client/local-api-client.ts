// The one client of the proxy's own API (core/local-api.ts), for the CLI
// (`tail`, `show`, `replay`) and the editor (the Traffic view, the Model
// Explorer, the chat provider). What every reader needs is here once: the
// local token as a bearer header, no redirects followed (a loopback answer
// that redirects is not the proxy, and the token must not travel on), a
// deadline, the proxy's error envelope read into a LocalApiError, and the
// event-stream reader of the live feed. The health challenge, which must
// not send the token first, is health-client.ts's.
import {
  budgetSessionPath,
  faultPath,
  type BudgetAnswer,
  type BudgetResetAnswer,
  LOCAL_PATHS,
  sessionPath,
  type FaultArmAnswer,
  type FaultArmRequest,
  type FaultDisarmAnswer,
  type FaultsAnswer,
  trafficEntryPath,
  type InFlightEvent,
  type KeysAnswer,
  type McpCallAnswer,
  type McpCallReport,
  type SessionDetailAnswer,
  type SessionListAnswer,
  type LiveEvent,
  type RefreshAnswer,
  type StatsAnswer,
  type TrafficDetail,
  type TrafficListAnswer,
  type TrafficRow,
  type TrafficSummary,
} from '../core/local-api.js';

/** Where the proxy is and the local token it takes. */
export interface LocalApiTarget {
  url: string;
  token: string;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** The whole exchange for a JSON answer, the headers for the live feed. */
  timeoutMs?: number;
}

/**
 * The deadline when the caller gives none. Loopback answers in milliseconds, but an answer with token counts waits
 * for the tokenizer's first load: `show --wire` took over 10 s on a 2-core machine busy with two test runners.
 */
const LOCAL_API_TIMEOUT_MS = 30_000;

/** The proxy refused (or something else answered): its status, error.code and message (without the request id). */
export class LocalApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface LocalApiClient {
  stats(o?: CallOptions): Promise<StatsAnswer>;
  keys(o?: CallOptions): Promise<KeysAnswer>;
  /** Every key's GET /models now. */
  refresh(o?: CallOptions): Promise<RefreshAnswer>;
  /** The ring, newest first, records whole; `q`: only entries whose bodies hold it. */
  traffic(
    q?: { after?: number; limit?: number; q?: string },
    o?: CallOptions,
  ): Promise<TrafficListAnswer<TrafficSummary>>;
  /** The ring, newest first, only the fields a row shows (ROW_FIELDS); `q`: only entries whose bodies hold it. */
  trafficRows(
    q?: { limit?: number; after?: number; q?: string },
    o?: CallOptions,
  ): Promise<TrafficListAnswer<TrafficRow>>;
  entry(id: string, o?: CallOptions): Promise<TrafficDetail>;
  /** Every new entry after `after` until the proxy ends the feed (resolves) or `signal` aborts (rejects). */
  live(after: number, onEvent: (e: LiveEvent<TrafficSummary>) => void, o?: CallOptions): Promise<void>;
  liveRows(after: number, onEvent: (e: LiveEvent<TrafficRow>) => void, o?: CallOptions): Promise<void>;
  /** liveRows, and the requests under way as they start and progress (InFlightEvent lines). */
  liveRowsInFlight(
    after: number,
    onEvent: (e: LiveEvent<TrafficRow> | InFlightEvent) => void,
    o?: CallOptions,
  ): Promise<void>;
  /** The sessions in the proxy's memory, most recently active first. */
  sessions(q?: { limit?: number }, o?: CallOptions): Promise<SessionListAnswer>;
  /** One session and its turns still in the ring. */
  session(id: string, o?: CallOptions): Promise<SessionDetailAnswer>;
  /** The armed fault rules and the report of what clients did after each fault. */
  faults(o?: CallOptions): Promise<FaultsAnswer>;
  /** Arms one rule; a rule that does not parse is a LocalApiError with code bad-fault-rule and what to fix. */
  armFault(arm: FaultArmRequest, o?: CallOptions): Promise<FaultArmAnswer>;
  /** Disarms one rule by its id, or every rule. */
  disarmFaults(id?: number, o?: CallOptions): Promise<FaultDisarmAnswer>;
  /** `loopgate mcp-wrap`: one call a stdio MCP server answered, recorded by the proxy. */
  reportMcpCall(report: McpCallReport, o?: CallOptions): Promise<McpCallAnswer>;
  /** Every budget cap, its spend and what is left. */
  budget(o?: CallOptions): Promise<BudgetAnswer>;
  /** A session's budget spend back to nothing; an unknown session is a LocalApiError with code unknown-session. */
  resetBudget(session: string, o?: CallOptions): Promise<BudgetResetAnswer>;
}

export function localApi(target: LocalApiTarget): LocalApiClient {
  const json = <T>(path: string, o: CallOptions = {}) => getJson<T>(target, path, o);
  const send = <T>(method: 'POST' | 'DELETE', path: string, body: unknown, o: CallOptions = {}) =>
    getJson<T>(target, path, o, { method, body });
  const feed = <E>(after: number, rows: boolean, onEvent: (e: E) => void, o: CallOptions = {}, inFlight = false) =>
    readFeed(
      target,
      `${LOCAL_PATHS.trafficLive}?${query({ after, rows: rows ? 1 : undefined, inFlight: inFlight ? 1 : undefined })}`,
      onEvent as (e: unknown) => void,
      o,
    );
  return {
    stats: (o) => json(LOCAL_PATHS.stats, o),
    keys: (o) => json(LOCAL_PATHS.keys, o),
    refresh: (o) => json(LOCAL_PATHS.refresh, o),
    traffic: (q = {}, o) => json(withQuery(LOCAL_PATHS.traffic, query(q)), o),
    trafficRows: (q = {}, o) => json(withQuery(LOCAL_PATHS.traffic, query({ ...q, rows: 1 })), o),
    entry: (id, o) => json(trafficEntryPath(id), o),
    live: (after, onEvent, o) => feed(after, false, onEvent, o),
    liveRows: (after, onEvent, o) => feed(after, true, onEvent, o),
    liveRowsInFlight: (after, onEvent, o) => feed(after, true, onEvent, o, true),
    sessions: (q = {}, o) => json(withQuery(LOCAL_PATHS.sessions, query(q)), o),
    session: (id, o) => json(sessionPath(id), o),
    faults: (o) => json(LOCAL_PATHS.faults, o),
    armFault: (arm, o) => send('POST', LOCAL_PATHS.faults, arm, o),
    disarmFaults: (id, o) => send('DELETE', id === undefined ? LOCAL_PATHS.faults : faultPath(id), undefined, o),
    reportMcpCall: (report, o) => send('POST', LOCAL_PATHS.mcpCalls, report, o),
    budget: (o) => json(LOCAL_PATHS.budget, o),
    resetBudget: (session, o) => send('DELETE', budgetSessionPath(session), undefined, o),
  };
}

function query(q: Record<string, number | string | undefined>): string {
  return Object.entries(q)
    .filter((e): e is [string, number | string] => e[1] !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
}

function withQuery(path: string, q: string): string {
  return q ? `${path}?${q}` : path;
}

/** The signal a call runs under: the caller's, and a deadline that `settle` ends early (the live feed's, once its headers came). */
function callSignal(o: CallOptions): { signal: AbortSignal; settle(): void } {
  const deadline = new AbortController();
  const ms = o.timeoutMs ?? LOCAL_API_TIMEOUT_MS;
  const timer = setTimeout(
    () =>
      deadline.abort(
        Object.assign(new Error(`the proxy did not answer within ${ms / 1000} s`), { name: 'TimeoutError' }),
      ),
    ms,
  );
  timer.unref?.();
  const signal = o.signal ? AbortSignal.any([o.signal, deadline.signal]) : deadline.signal;
  return { signal, settle: () => clearTimeout(timer) };
}

/** A call that changes something: its method and JSON body. */
interface Change {
  method: 'POST' | 'DELETE';
  body: unknown;
}

async function request(target: LocalApiTarget, path: string, signal: AbortSignal, change?: Change): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${target.token}` };
  if (change?.body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await fetch(target.url + path, {
      method: change?.method ?? 'GET',
      headers,
      body: change?.body === undefined ? undefined : JSON.stringify(change.body),
      signal,
      redirect: 'manual',
    });
  } catch (err) {
    // fetch says only "fetch failed": the socket's code (ECONNREFUSED, …) is what a reader can act on.
    throw withSocketCode(err, signal);
  }
}

/** `err` with its cause's socket code on it (`code`), unless the call was aborted. */
function withSocketCode(err: unknown, signal: AbortSignal): unknown {
  const code = (err as { cause?: { code?: unknown } }).cause?.code;
  if (signal.aborted || typeof code !== 'string') return err;
  return Object.assign(new Error(`cannot reach the proxy (${code})`, { cause: err }), { code });
}

async function getJson<T>(target: LocalApiTarget, path: string, o: CallOptions, change?: Change): Promise<T> {
  const call = callSignal(o);
  try {
    const res = await request(target, path, call.signal, change);
    const text = await res.text();
    if (res.status !== 200) throw refusal(res.status, text);
    return JSON.parse(text) as T;
  } finally {
    call.settle();
  }
}

async function readFeed(
  target: LocalApiTarget,
  path: string,
  onEvent: (e: unknown) => void,
  o: CallOptions,
): Promise<void> {
  const call = callSignal(o);
  let res: Response;
  try {
    res = await request(target, path, call.signal);
  } finally {
    // The feed lasts as long as the proxy and the reader do: only the headers have a deadline.
    call.settle();
  }
  if (res.status !== 200 || !res.body) throw refusal(res.status, await res.text());
  try {
    await readDataLines(res.body, (data) => onEvent(JSON.parse(data)));
  } catch (err) {
    // A proxy that went away mid-feed: the socket's own code (ECONNRESET, UND_ERR_SOCKET), as node:http would give it.
    throw withSocketCode(err, call.signal);
  }
}

/** Calls `onData` with each `data:` line of an event stream, in order; a character split across two reads is joined, not replaced. */
async function readDataLines(body: ReadableStream<Uint8Array>, onData: (data: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.startsWith('data: ')) onData(line.slice(6));
    }
  }
}

/** A refusal in the proxy's envelope ({error:{code,message}}), or whatever else answered, cut short. */
function refusal(status: number, text: string): LocalApiError {
  let code: string | undefined;
  let message = text.slice(0, 500) || `HTTP ${status}`;
  try {
    const err = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    if (typeof err?.code === 'string') code = err.code;
    if (typeof err?.message === 'string' && err.message) message = withoutRequestId(err.message);
  } catch {
    // not JSON: the text as it is
  }
  return new LocalApiError(status, code, message);
}

/** The proxy's messages end with "(loopgate request id: …)": a reader showing the message drops it. */
function withoutRequestId(message: string): string {
  return message.replace(/ \(loopgate request id: [^)]*\)$/, '');
}
