// The Traffic view's model: the proxy's recent requests, newest first, kept
// live from the proxy's feed (/_loopgate/traffic/live, over loopback with the
// local token: the proxy this window started and an attached one alike), and
// the requests still under way (the feed's in-flight events), until each one's
// finished row replaces it. The list is bounded (MAX_ROWS) whatever the proxy
// holds; a burst of requests redraws the view once per FLUSH_MS, not once per
// request. The text filter also matches bodies: the proxy searches them (?q=).
import * as vscode from 'vscode';
import { failed } from '../../presentation/render.js';
import {
  LOCAL_ERROR_CODES,
  type InFlightEvent,
  type InFlightRequest,
  type LiveEvent,
  type TrafficRow,
} from '../../core/local-api.js';
import { localApi, LocalApiError } from '../../client/local-api-client.js';
import type { SessionSummary } from '../../core/agent-session.js';
import type { ProxyHost } from '../proxy-host/host.js';

/** Rows the view keeps: enough to scroll back a session, bounded for the extension host's memory. */
export const MAX_ROWS = 1000;
const FLUSH_MS = 100;
const RECONNECT_MS = 2000;
/** The proxy's session totals are fetched again at most this often while the view is grouped. */
const SESSIONS_MS = 1000;
/** An in-flight row's elapsed time is redrawn this often. */
const TICK_MS = 1000;
/** New rows are searched for the filter's text at most this often. */
const SEARCH_MS = 300;

/** A request under way as the view shows it: the proxy's last report, and when it came. */
export interface InFlightRow extends InFlightRequest {
  receivedAt: number;
}

// A row holds only the fields the proxy sends for it (?rows=1, ROW_FIELDS in the contract).

export interface TrafficFilter {
  text?: string;
  /** '2xx', '4xx', '5xx', 'errors' */
  status?: string;
  model?: string;
  key?: string;
}

/** `bodyMatches`: ids of the rows whose bodies hold the filter's text (the proxy searched them). */
function rowMatches(row: TrafficRow, f: TrafficFilter, bodyMatches?: ReadonlySet<string>): boolean {
  const r = row.record;
  if (f.status === 'errors' ? !failed(r) : f.status && String(r.status)[0] !== f.status[0]) return false;
  if (f.model && r.model !== f.model) return false;
  if (f.key && r.key !== f.key) return false;
  if (f.text) {
    const hay =
      `${r.method} ${r.path} ${r.canonicalPath} ${r.status} ${r.model ?? ''} ${r.key ?? ''} ${r.diagnosis ?? ''} ${r.errorCode ?? ''} ${r.id} ${r.session?.client ?? ''}`.toLowerCase();
    if (!hay.includes(f.text.toLowerCase()) && !bodyMatches?.has(r.id)) return false;
  }
  return true;
}

/** An in-flight row has no status nor body yet: only the text and the model or key filter apply. */
function inFlightMatches(q: InFlightRequest, f: TrafficFilter): boolean {
  if (f.status) return false;
  if (f.model && q.model !== f.model) return false;
  if (f.key && q.key !== f.key) return false;
  return (
    !f.text ||
    `${q.method} ${q.path} ${q.model ?? ''} ${q.key ?? ''} ${q.id}`.toLowerCase().includes(f.text.toLowerCase())
  );
}

export class TrafficList implements vscode.Disposable {
  private rows: TrafficRow[] = [];
  private lastSeq = 0;
  /** Rows at or below this seq were cleared by the user. */
  private clearedAt = 0;
  private pending: TrafficRow[] = [];
  private flushTimer?: NodeJS.Timeout;
  private abort?: AbortController;
  private connectedTo?: string;
  /** The proxy the rows came from. */
  private rowsFrom?: string;
  private retry?: NodeJS.Timeout;
  private disposed = false;
  paused = false;
  filter: TrafficFilter = {};
  /** The shared log file shown instead of the live feed (shared-log.ts), by name; undefined while live. */
  sharedLog: string | undefined;
  /** Why the list is empty or stale (capture off, no proxy), for the view's message. */
  status: string | undefined = 'Waiting for the proxy…';
  /** The rows are from before the feed stopped (capture turned off, the proxy gone): they no longer update. */
  stale = false;
  /** Requests under way, by id, until their finished row arrives. */
  private readonly inFlight = new Map<string, InFlightRow>();
  /** Ids of finished rows seen lately: a late in-flight report of one must not bring it back. */
  private finished = new Set<string>();
  private tick?: NodeJS.Timeout;
  /** The filter's text as the proxy searched the bodies for it, and the ids it found. */
  private bodySearch?: { text: string; ids: Set<string>; upTo: number };
  private searchTimer?: NodeJS.Timeout;
  /** The proxy's totals per session (/_loopgate/sessions), while the view is grouped; absent from older proxies. */
  sessionTotals = new Map<string, SessionSummary>();
  private wantSessions = false;
  private sessionsTimer?: NodeJS.Timeout;
  private sessionsAgain = false;
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;
  private readonly faultEmitter = new vscode.EventEmitter<TrafficRow>();
  /** A finished request the proxy injected a fault into came in (the armed rules' counts changed). */
  readonly onDidSeeFault = this.faultEmitter.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly host: ProxyHost) {
    this.subscription = host.onDidChangeState(() => this.connect());
    this.connect();
  }

  /** Newest first, filtered. */
  visible(): TrafficRow[] {
    const bodies = this.bodySearch?.text === this.filter.text ? this.bodySearch?.ids : undefined;
    return this.rows.filter((r) => r.seq > this.clearedAt && rowMatches(r, this.filter, bodies));
  }

  /** Requests under way, newest first, filtered; none while paused (the view holds still, and nothing in it ends). */
  underWay(): InFlightRow[] {
    if (this.paused) return [];
    return [...this.inFlight.values()].reverse().filter((q) => inFlightMatches(q, this.filter));
  }

  get size(): number {
    return this.rows.length;
  }

  /** For the view's title: rows shown, rows held since the last Clear, and finished requests held back by Pause. */
  counts(): { shown: number; total: number; waiting: number } {
    const total = this.rows.filter((r) => r.seq > this.clearedAt).length + this.inFlight.size;
    return { shown: this.visible().length + this.underWay().length, total, waiting: this.pending.length };
  }

  get filtered(): boolean {
    const f = this.filter;
    return Boolean(f.text || f.status || f.model || f.key);
  }

  setFilter(filter: TrafficFilter): void {
    this.filter = filter;
    this.emitter.fire();
    this.searchBodies();
  }

  /** Grouped by session: the proxy's totals are kept current (they count requests the list no longer holds). */
  followSessions(on: boolean): void {
    this.wantSessions = on;
    if (on) this.fetchSessions();
  }

  private fetchSessions(): void {
    const url = this.connectedTo;
    if (!this.wantSessions || !url) return;
    // At most one fetch per SESSIONS_MS; a change meanwhile fetches once more when it ends.
    if (this.sessionsTimer) {
      this.sessionsAgain = true;
      return;
    }
    this.sessionsTimer = setTimeout(() => {
      this.sessionsTimer = undefined;
      if (this.sessionsAgain) {
        this.sessionsAgain = false;
        this.fetchSessions();
      }
    }, SESSIONS_MS);
    void localApi({ url, token: this.host.token })
      .sessions({ limit: MAX_ROWS })
      .then((answer) => {
        this.sessionTotals = new Map(answer.sessions.map((s) => [s.id, s]));
        this.emitter.fire();
      })
      .catch(() => undefined); // an older proxy: the view sums its own rows
  }

  /** Asks the proxy which rows' bodies hold the filter's text (all of them, or those after the last search). */
  private searchBodies(): void {
    clearTimeout(this.searchTimer);
    this.searchTimer = undefined;
    const text = this.filter.text;
    const url = this.connectedTo;
    if (!text || !url) {
      this.bodySearch = undefined;
      return;
    }
    const fresh = this.bodySearch?.text !== text;
    const search = fresh ? { text, ids: new Set<string>(), upTo: 0 } : this.bodySearch!;
    this.bodySearch = search;
    const upTo = this.lastSeq;
    void localApi({ url, token: this.host.token })
      .trafficRows({ q: text, limit: MAX_ROWS, after: search.upTo || undefined })
      .then((answer) => {
        if (this.bodySearch !== search) return;
        for (const e of answer.entries) search.ids.add(e.record.id);
        search.upTo = Math.max(search.upTo, upTo);
        this.emitter.fire();
      })
      .catch(() => undefined); // the row text still filters; the next rows search again
  }

  setPaused(paused: boolean): void {
    this.paused = paused;
    if (!paused) this.flush();
    this.emitter.fire();
  }

  clear(): void {
    this.clearedAt = this.lastSeq;
    this.inFlight.clear();
    this.emitter.fire();
  }

  /** (Re)connects to the proxy this window uses now; nothing to do when it is the same one. */
  connect(): void {
    if (this.sharedLog !== undefined) return;
    const endpoint = this.host.endpoint;
    const url = endpoint?.url;
    if (url === this.connectedTo && this.abort) return;
    this.abort?.abort();
    this.abort = undefined;
    this.connectedTo = url;
    clearTimeout(this.retry);
    if (!url || this.disposed) {
      this.status = 'The Loopgate proxy is not running.';
      this.goStale();
      this.emitter.fire();
      return;
    }
    const abort = new AbortController();
    this.abort = abort;
    void this.follow(url, abort.signal).catch((err: unknown) => {
      if (abort.signal.aborted || this.disposed) return;
      this.status = `Traffic feed interrupted (${(err as Error).message}); reconnecting…`;
      this.goStale();
      this.emitter.fire();
      this.abort = undefined;
      this.retry = setTimeout(() => this.connect(), RECONNECT_MS);
    });
  }

  private async follow(url: string, signal: AbortSignal): Promise<void> {
    const api = localApi({ url, token: this.host.token });
    let list;
    try {
      list = await api.trafficRows({ limit: MAX_ROWS }, { signal });
    } catch (err) {
      if (!(err instanceof LocalApiError)) throw err;
      if (err.status !== 404) throw new Error(`HTTP ${err.status}`);
      this.status =
        err.code === LOCAL_ERROR_CODES.captureOff
          ? 'Traffic capture is off (loopgate.traffic.capture), so the proxy keeps no requests to show.'
          : 'This proxy has no traffic feed (an older Loopgate?).';
      this.goStale();
      // Not following anything: the next change of state tries again, even on the same address.
      this.abort = undefined;
      this.emitter.fire();
      return;
    }
    const newest = list.entries[0]?.seq ?? 0;
    // A proxy that started again (its sequence went back) forgets what the user cleared; a reconnect to the same one keeps it.
    if (url !== this.rowsFrom || newest < this.lastSeq) this.clearedAt = 0;
    this.rowsFrom = url;
    this.rows = [];
    this.pending = [];
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.lastSeq = 0;
    this.inFlight.clear();
    this.stale = false;
    for (const row of list.entries.reverse()) this.push(row);
    this.status = undefined;
    this.flush();
    this.searchBodies();
    try {
      await api.liveRowsInFlight(this.lastSeq, (e) => this.onLive(e), { signal });
    } catch (err) {
      throw err instanceof LocalApiError ? new Error(`HTTP ${err.status}`) : err;
    }
    throw new Error('the proxy closed the feed');
  }

  /** The rows stay, marked as from before: requests under way will never report their end here. */
  private goStale(): void {
    if (this.rows.length) this.stale = true;
    this.inFlight.clear();
    this.pending = [];
  }

  private onLive(e: LiveEvent<TrafficRow> | InFlightEvent): void {
    if ('inFlight' in e) this.progress(e.inFlight);
    else this.push(e);
  }

  private progress(q: InFlightRequest): void {
    if (this.finished.has(q.id)) return;
    this.inFlight.set(q.id, { ...q, receivedAt: Date.now() });
    this.tick ??= setInterval(() => this.onTick(), TICK_MS);
    if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  private onTick(): void {
    if (this.inFlight.size === 0) {
      clearInterval(this.tick);
      this.tick = undefined;
    } else if (!this.paused) this.emitter.fire();
  }

  private push(row: TrafficRow): void {
    if (row.seq <= this.lastSeq) return;
    this.lastSeq = row.seq;
    this.finished.add(row.record.id);
    if (row.record.fault) this.faultEmitter.fire(row);
    // Remembered only as long as a late in-flight report could still come.
    if (this.finished.size > 4 * MAX_ROWS) this.finished = new Set([...this.finished].slice(-MAX_ROWS));
    this.pending.push({ seq: row.seq, record: row.record });
    // Paused through a long burst: only the newest MAX_ROWS can ever be shown.
    if (this.pending.length > 2 * MAX_ROWS) this.pending = this.pending.slice(-MAX_ROWS);
    if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.paused) {
      // Ended: no longer under way, though its row waits for Resume (the title's "N waiting" counts it).
      for (const row of this.pending) this.inFlight.delete(row.record.id);
      if (this.pending.length) this.emitter.fire();
      return;
    }
    if (this.pending.length) {
      for (const row of this.pending) this.inFlight.delete(row.record.id);
      this.rows = [...this.pending.reverse(), ...this.rows].slice(0, MAX_ROWS);
      this.pending = [];
      if (this.filter.text) this.searchTimer ??= setTimeout(() => this.searchBodies(), SEARCH_MS);
      this.fetchSessions();
    }
    this.emitter.fire();
  }

  /** Shows a shared log's rows (newest first) instead of the live feed, until showLive(). */
  showShared(name: string, rows: TrafficRow[]): void {
    this.abort?.abort();
    this.abort = undefined;
    this.connectedTo = undefined;
    clearTimeout(this.retry);
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.pending = [];
    this.sharedLog = name;
    this.rows = rows.slice(0, MAX_ROWS);
    this.clearedAt = 0;
    this.lastSeq = 0;
    this.status = `Shared log ${name} (read-only)${rows.length > MAX_ROWS ? `: its newest ${MAX_ROWS} of ${rows.length}` : ''}.`;
    this.emitter.fire();
  }

  /** Back to the proxy's live feed. */
  showLive(): void {
    this.sharedLog = undefined;
    this.rows = [];
    this.rowsFrom = undefined;
    this.status = 'Waiting for the proxy…';
    this.connect();
    this.emitter.fire();
  }

  /** A row by its request id (the panel, commands). */
  find(id: string): TrafficRow | undefined {
    return this.rows.find((r) => r.record.id === id);
  }

  dispose(): void {
    this.disposed = true;
    this.abort?.abort();
    clearTimeout(this.retry);
    clearTimeout(this.flushTimer);
    clearTimeout(this.searchTimer);
    clearTimeout(this.sessionsTimer);
    clearInterval(this.tick);
    this.subscription.dispose();
    this.emitter.dispose();
    this.faultEmitter.dispose();
  }
}
