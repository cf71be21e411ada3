// The Traffic view's model: the proxy's recent requests, newest first, kept
// live from the proxy's feed (/_loopgate/traffic/live, over loopback with the
// local token: the proxy this window started and an attached one alike). The
// list is bounded (MAX_ROWS) whatever the proxy holds; a burst of requests
// redraws the view once per FLUSH_MS, not once per request.
import * as vscode from 'vscode';
import { failed } from '../../proxy/traffic/render.js';
import { LOCAL_ERROR_CODES, type TrafficRow } from '../../proxy/core/local-api.js';
import { localApi, LocalApiError } from '../../proxy/local-api-client.js';
import type { ProxyHost } from '../proxy-host/host.js';

/** Rows the view keeps: enough to scroll back a session, bounded for the extension host's memory. */
export const MAX_ROWS = 1000;
const FLUSH_MS = 100;
const RECONNECT_MS = 2000;

// A row holds only the fields the proxy sends for it (?rows=1, ROW_FIELDS in the contract).

export interface TrafficFilter {
  text?: string;
  /** '2xx', '4xx', '5xx', 'errors' */
  status?: string;
  model?: string;
  key?: string;
}

function rowMatches(row: TrafficRow, f: TrafficFilter): boolean {
  const r = row.record;
  if (f.status === 'errors' ? !failed(r) : f.status && String(r.status)[0] !== f.status[0]) return false;
  if (f.model && r.model !== f.model) return false;
  if (f.key && r.key !== f.key) return false;
  if (f.text) {
    const hay =
      `${r.method} ${r.path} ${r.canonicalPath} ${r.status} ${r.model ?? ''} ${r.key ?? ''} ${r.diagnosis ?? ''} ${r.errorCode ?? ''} ${r.id}`.toLowerCase();
    if (!hay.includes(f.text.toLowerCase())) return false;
  }
  return true;
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
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly host: ProxyHost) {
    this.subscription = host.onDidChangeState(() => this.connect());
    this.connect();
  }

  /** Newest first, filtered. */
  visible(): TrafficRow[] {
    return this.rows.filter((r) => r.seq > this.clearedAt && rowMatches(r, this.filter));
  }

  get size(): number {
    return this.rows.length;
  }

  setFilter(filter: TrafficFilter): void {
    this.filter = filter;
    this.emitter.fire();
  }

  setPaused(paused: boolean): void {
    this.paused = paused;
    if (!paused) this.flush();
    this.emitter.fire();
  }

  clear(): void {
    this.clearedAt = this.lastSeq;
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
      this.emitter.fire();
      return;
    }
    const abort = new AbortController();
    this.abort = abort;
    void this.follow(url, abort.signal).catch((err: unknown) => {
      if (abort.signal.aborted || this.disposed) return;
      this.status = `Traffic feed interrupted (${(err as Error).message}); reconnecting…`;
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
    for (const row of list.entries.reverse()) this.push(row);
    this.status = undefined;
    this.flush();
    try {
      await api.liveRows(this.lastSeq, (row) => this.push(row), { signal });
    } catch (err) {
      throw err instanceof LocalApiError ? new Error(`HTTP ${err.status}`) : err;
    }
    throw new Error('the proxy closed the feed');
  }

  private push(row: TrafficRow): void {
    if (row.seq <= this.lastSeq) return;
    this.lastSeq = row.seq;
    this.pending.push({ seq: row.seq, record: row.record });
    // Paused through a long burst: only the newest MAX_ROWS can ever be shown.
    if (this.pending.length > 2 * MAX_ROWS) this.pending = this.pending.slice(-MAX_ROWS);
    if (!this.flushTimer && !this.paused) this.flushTimer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.paused || this.pending.length === 0) return;
    this.rows = [...this.pending.reverse(), ...this.rows].slice(0, MAX_ROWS);
    this.pending = [];
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
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
