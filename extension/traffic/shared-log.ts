// Open a Shared Log: a teammate's redacted HAR or JSONL shown in the Traffic
// view and the detail panel instead of the live feed, read-only and labelled
// with the file's name, until "Show Live Traffic". The file is parsed field by
// field (storage/log/shared-log-reader.ts) and redacted again with this machine's token
// and keys; the panel escapes every value like the live ones (detail-html.ts).
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { parseSharedLog, SharedLogError, SHARED_LOG_MAX_BYTES } from '../../storage/log/shared-log-reader.js';
import { sanitizeRecords } from '../../storage/log/sanitize.js';
import { followUps } from '../../rules/wire/follow-ups.js';
import type { TrafficRecord } from '../../core/record.js';
import type { DetailEntry } from './detail-html.js';
import type { TrafficList } from './traffic-list.js';
import type { ProxyHost } from '../proxy-host/host.js';
import type { KeyStore } from '../secrets.js';

/** The file shown (one window shows one source at a time). */
let shown: { name: string; entries: Map<string, DetailEntry> } | undefined;

/** Request `id` of the shared log shown, if one is and holds it. */
export function sharedEntry(id: string): DetailEntry | undefined {
  return shown?.entries.get(id);
}

/** The shared log's file name, while one is shown. */
export function sharedLogName(): string | undefined {
  return shown?.name;
}

export interface SharedLogDeps {
  host: ProxyHost;
  keys: KeyStore;
  list: TrafficList;
}

export type OpenSharedAnswer = { opened: number; name: string } | { error: string };

async function pickFile(arg: unknown): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg;
  if (typeof arg === 'string') return vscode.Uri.file(arg);
  const picked = await vscode.window.showOpenDialog({
    title: 'Loopgate: Open a Shared Traffic Log',
    canSelectMany: false,
    filters: { 'Traffic logs (HAR, JSONL)': ['har', 'jsonl', 'json', 'log'] },
  });
  return picked?.[0];
}

function entriesOf(records: TrafficRecord[]): Map<string, DetailEntry> {
  const entries: DetailEntry[] = [];
  const seen = new Set<string>();
  records.forEach((rec, i) => {
    // Ids must tell rows apart: a file with the same id twice keeps both.
    const id = seen.has(rec.id) ? `${rec.id}-${i + 1}` : rec.id;
    seen.add(id);
    const { requestBody, responseBody, ...record } = rec;
    entries.push({ seq: i + 1, record: { ...record, id }, requestBody, responseBody });
  });
  // A tool call's result is in a later request of the same file, as in the live ring.
  entries.forEach((e, i) => (e.followUps = followUps(e, entries.slice(i + 1))));
  return new Map(entries.map((e) => [e.record.id, e]));
}

/** Reads, checks and shows the file; a file that is not a log gets an error naming the line or entry. */
export async function openSharedLog(d: SharedLogDeps, arg?: unknown): Promise<OpenSharedAnswer | undefined> {
  const uri = await pickFile(arg);
  if (!uri) return undefined;
  const name = basename(uri.path);
  const fail = (why: string): OpenSharedAnswer => {
    const error = `Loopgate: cannot open ${name} as a traffic log: ${why}`;
    void vscode.window.showErrorMessage(error);
    return { error };
  };
  let records: TrafficRecord[];
  try {
    const { size } = await vscode.workspace.fs.stat(uri);
    if (size > SHARED_LOG_MAX_BYTES)
      return fail(`it is ${Math.round(size / 2 ** 20)} MiB, over ${SHARED_LOG_MAX_BYTES / 2 ** 20} MiB`);
    records = parseSharedLog(new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)));
  } catch (err) {
    if (err instanceof SharedLogError) return fail(err.message);
    return fail(err instanceof vscode.FileSystemError ? err.message : String((err as Error).message));
  }
  if (records.length === 0) return fail('it holds no requests');
  // Whatever the teammate redacted, this machine's own token and keys never show.
  const secrets = [d.host.token, ...(await d.keys.list()).map((k) => k.key)];
  const entries = entriesOf(sanitizeRecords(records, { secrets }));
  shown = { name, entries };
  d.list.showShared(
    name,
    [...entries.values()].reverse().map((e) => ({ seq: e.seq, record: e.record })),
  );
  await vscode.commands.executeCommand('setContext', 'loopgate.trafficShared', true);
  return { opened: entries.size, name };
}

export async function showLiveTraffic(d: SharedLogDeps): Promise<void> {
  shown = undefined;
  d.list.showLive();
  await vscode.commands.executeCommand('setContext', 'loopgate.trafficShared', false);
}
