// The Traffic view's commands: open a request, Replay, Edit and Resend (an
// untitled JSON document, sent with a CodeLens or the command), Copy as curl,
// Compare with… and Show Translation (VS Code's own diff editor), Export as
// HAR, and the list's filter, pause and clear. Everything goes through the
// proxy with the local token; the key is never here.
import { homedir } from 'node:os';
import * as vscode from 'vscode';
import type { ProxyHost } from '../proxy-host/host.js';
import type { KeyStore } from '../secrets.js';
import { replayRequest } from '../../rules/replay/replay-request.js';
import { curlCommand } from '../../rules/replay/replay-request.js';
import { sendReplay } from '../../client/send-replay.js';
import { shortId } from '../../presentation/render.js';
import { pointerLine } from '../../presentation/pointer-line.js';
import { toHar } from '../../storage/log/har.js';
import { writePrivateFile } from '../../storage/log/export-file.js';
import { cliInvocation } from '../../cli/invocation.js';
import type { TrafficRecord } from '../../core/record.js';
import type { DetailPanels } from './detail-panel.js';
import type { DetailEntry } from './detail-html.js';
import { fetchEntry, TrafficUnavailable, withTurnNumbers } from './entry-reader.js';
import { changedSpan } from './changed-words.js';
import { turnName } from './turn-overview.js';
import { sharedEntry } from './shared-log.js';
import type { TrafficList } from './traffic-list.js';
import { GROUP_SETTING, type TrafficItem } from './traffic-tree.js';

export const TRAFFIC_SCHEME = 'loopgate-traffic';

export interface TrafficDeps {
  host: ProxyHost;
  keys: KeyStore;
  list: TrafficList;
  panels: DetailPanels;
  /** dist/cli.js, for the `$(… token)` in a copied curl command. */
  cliPath: string;
  /** The workspace's memory (Save as Fixture's last folder). */
  state?: vscode.Memento;
}

/** A command's argument: a tree item, a request id, or (from the panel or palette) the open request. */
function idOf(arg: unknown, d: TrafficDeps): string | undefined {
  if (typeof arg === 'string') return arg;
  const row = (arg as TrafficItem | undefined)?.row;
  if (row) return row.record.id;
  return d.panels.entry?.record.id;
}

async function entryOf(arg: unknown, d: TrafficDeps): Promise<DetailEntry | undefined> {
  if (arg && typeof arg === 'object' && 'record' in arg && 'seq' in arg && 'requestBody' in arg)
    return arg as DetailEntry;
  const id = idOf(arg, d);
  if (!id) {
    void vscode.window.showInformationMessage('Loopgate: select a request in the Traffic view first.');
    return undefined;
  }
  try {
    return await fetchEntry(d.host, id);
  } catch (err) {
    void vscode.window.showWarningMessage(`Loopgate: ${(err as Error).message}`);
    if (!(err instanceof TrafficUnavailable)) throw err;
    return undefined;
  }
}

/** `from`: 'list' when a row was clicked: the list keeps the keyboard (↑/↓ then move the panel), as the Explorer's preview does. */
export async function openRequest(d: TrafficDeps, arg: unknown, from?: unknown): Promise<void> {
  const id = idOf(arg, d);
  if (!id) return;
  try {
    await d.panels.show(id, { preserveFocus: from === 'list' });
  } catch (err) {
    void vscode.window.showWarningMessage(`Loopgate: ${(err as Error).message}`);
  }
}

/** A request of a shared log is someone else's record: shown, never sent again from here. */
function readOnly(entry: DetailEntry): boolean {
  if (!sharedEntry(entry.record.id)) return false;
  void vscode.window.showInformationMessage(
    'Loopgate: this request is from a shared log (read-only); Show Live Traffic to replay your own.',
  );
  return true;
}

/** How long the answer to a resend may take to reach the proxy's memory after it ended. */
const LANDING_MS = 5000;

/** Opens the answer to a resend in the panel as soon as the proxy holds it. */
async function showWhenLanded(d: TrafficDeps, id: string, beside: boolean): Promise<void> {
  const deadline = performance.now() + LANDING_MS;
  for (;;) {
    try {
      return await d.panels.show(id, { beside });
    } catch (err) {
      if (!(err instanceof TrafficUnavailable) || performance.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Sends `body` (or the recorded one) as a replay of `entry`; returns the new request's id. */
async function resend(d: TrafficDeps, entry: DetailEntry, body?: string): Promise<string | undefined> {
  if (readOnly(entry)) return undefined;
  const url = d.host.endpoint?.url;
  if (!url) {
    void vscode.window.showWarningMessage('Loopgate: the proxy is not running.');
    return undefined;
  }
  const plan = replayRequest(entry, body ?? entry.requestBody);
  if (!plan.ok) {
    void vscode.window.showWarningMessage(`Loopgate: this request cannot be sent again: ${plan.reason}`);
    return undefined;
  }
  const answer = await sendReplay(url, d.host.token, plan.request);
  const notes = plan.request.notes.length ? ` (${plan.request.notes.join('; ')})` : '';
  void vscode.window.setStatusBarMessage(
    `Loopgate: replayed ${shortId(entry.record.id)} → ${answer.status}${notes}`,
    5000,
  );
  return answer.id;
}

/** Sends it again and shows the answer (in the panel; beside the editor when an edit was sent). */
async function resendAndShow(
  d: TrafficDeps,
  entry: DetailEntry,
  body: string | undefined,
  beside: boolean,
): Promise<string | undefined> {
  const id = await resend(d, entry, body);
  if (id)
    await showWhenLanded(d, id, beside).catch(
      (err: Error) => void vscode.window.showWarningMessage(`Loopgate: ${err.message}`),
    );
  return id;
}

export async function replay(d: TrafficDeps, arg: unknown): Promise<string | undefined> {
  const entry = await entryOf(arg, d);
  return entry ? resendAndShow(d, entry, undefined, false) : undefined;
}

/** Untitled documents opened by Edit and Resend, and the request each resends (forgotten when closed). */
const editing = new Map<string, DetailEntry>();

export function forgetClosedEdits(): vscode.Disposable {
  return vscode.workspace.onDidCloseTextDocument((doc) => editing.delete(doc.uri.toString()));
}

export async function editAndResend(d: TrafficDeps, arg: unknown): Promise<vscode.TextDocument | undefined> {
  const entry = await entryOf(arg, d);
  if (!entry || readOnly(entry)) return undefined;
  if (entry.requestBody === undefined || entry.requestBodyNote) {
    void vscode.window.showWarningMessage(
      'Loopgate: this request has no whole body to edit (none, or over the capture limit).',
    );
    return undefined;
  }
  let content = entry.requestBody;
  try {
    content = JSON.stringify(JSON.parse(entry.requestBody), null, 2);
  } catch {
    // not JSON: as it was
  }
  // Named after the request (`resend-1a2b3c4d.json`, untitled until saved), not `Untitled-1`.
  const uri = vscode.Uri.from({ scheme: 'untitled', path: `resend-${shortId(entry.record.id)}.json` });
  let doc = await vscode.workspace.openTextDocument(uri);
  const edit = new vscode.WorkspaceEdit();
  edit.replace(uri, new vscode.Range(0, 0, doc.lineCount, 0), content);
  await vscode.workspace.applyEdit(edit);
  if (doc.languageId !== 'json') doc = await vscode.languages.setTextDocumentLanguage(doc, 'json');
  editing.set(doc.uri.toString(), entry);
  await vscode.window.showTextDocument(doc);
  return doc;
}

export async function sendEdited(d: TrafficDeps, arg: unknown): Promise<string | undefined> {
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  const entry = uri && editing.get(uri.toString());
  if (!uri || !entry) {
    void vscode.window.showInformationMessage(
      'Loopgate: open a request body with "Edit and Resend" in the Traffic view first.',
    );
    return undefined;
  }
  const doc = vscode.workspace.textDocuments.find((t) => t.uri.toString() === uri.toString());
  return doc ? resendAndShow(d, entry, doc.getText(), true) : undefined;
}

/** The CodeLens on an Edit and Resend document. */
export class ResendLens implements vscode.CodeLensProvider {
  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const entry = editing.get(doc.uri.toString());
    if (!entry) return [];
    return [
      new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), {
        title: `$(send) Send through Loopgate (edit of ${shortId(entry.record.id)})`,
        command: 'loopgate.sendEditedRequest',
        arguments: [doc.uri],
      }),
    ];
  }
}

export async function copyCurl(d: TrafficDeps, arg: unknown): Promise<string | undefined> {
  const entry = await entryOf(arg, d);
  const url = d.host.endpoint?.url;
  if (!entry || !url || readOnly(entry)) return undefined;
  const plan = replayRequest(entry);
  if (!plan.ok) {
    void vscode.window.showWarningMessage(`Loopgate: this request cannot be sent again: ${plan.reason}`);
    return undefined;
  }
  // `$(<cli> token)`: the clipboard never holds the token, and the command runs as pasted on this machine.
  const text = curlCommand(plan.request, url, { command: cliInvocation(process.env, d.cliPath).command });
  await vscode.env.clipboard.writeText(text);
  void vscode.window.setStatusBarMessage(
    'Loopgate: curl command copied (it reads the local token with `loopgate token`).',
    5000,
  );
  return text;
}

function bodyUri(id: string, side: 'request' | 'upstream'): vscode.Uri {
  return vscode.Uri.from({ scheme: TRAFFIC_SCHEME, path: `/${id}/${side}.json` });
}

/** Bodies of requests in the ring as read-only documents, for the diff editor. */
export class TrafficBodies implements vscode.TextDocumentContentProvider {
  constructor(private readonly host: ProxyHost) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const [, id, file] = uri.path.split('/');
    const entry = await fetchEntry(this.host, id!);
    const body = file === 'upstream.json' ? entry.upstreamRequestBody : entry.requestBody;
    if (body === undefined) return '(no body kept)';
    try {
      return JSON.stringify(JSON.parse(body), null, 2);
    } catch {
      return body;
    }
  }
}

export async function compareWith(d: TrafficDeps, arg: unknown, otherId?: unknown): Promise<void> {
  const id = idOf(arg, d);
  if (!id) return;
  let other = typeof otherId === 'string' ? otherId : undefined;
  if (!other) {
    const pick = await vscode.window.showQuickPick(
      d.list
        .visible()
        .filter((r) => r.record.id !== id)
        .map((r) => ({
          label: `${r.record.method} ${r.record.path}`,
          description: `${r.record.status} · ${r.record.model ?? ''} · ${r.record.time.slice(11, 19)}`,
          id: r.record.id,
        })),
      { title: `Compare request ${shortId(id)}'s body with…`, matchOnDescription: true },
    );
    other = pick?.id;
  }
  if (!other) return;
  await vscode.commands.executeCommand(
    'vscode.diff',
    bodyUri(id, 'request'),
    bodyUri(other, 'request'),
    `Request ${shortId(id)} ↔ ${shortId(other)}`,
  );
}

export async function showTranslation(d: TrafficDeps, arg: unknown): Promise<void> {
  const entry = await entryOf(arg, d);
  if (!entry) return;
  if (!entry.record.bridge) {
    void vscode.window.showInformationMessage('Loopgate: this request went upstream as it was sent (not bridged).');
    return;
  }
  const id = entry.record.id;
  await vscode.commands.executeCommand(
    'vscode.diff',
    bodyUri(id, 'request'),
    bodyUri(id, 'upstream'),
    `Bridge ${entry.record.bridge}: ${shortId(id)} as sent ↔ as forwarded`,
  );
}

/** This request (from an item or the panel) or, from the view's title, every request the filter shows. */
export async function exportHar(d: TrafficDeps, arg: unknown, target?: unknown): Promise<string | undefined> {
  const ids =
    arg === 'visible' || arg === undefined
      ? d.list.visible().map((r) => r.record.id)
      : [idOf(arg, d)].filter((x): x is string => Boolean(x));
  if (ids.length === 0) {
    void vscode.window.showInformationMessage('Loopgate: no requests to export.');
    return undefined;
  }
  const uri =
    typeof target === 'string'
      ? vscode.Uri.file(target)
      : await vscode.window.showSaveDialog({
          title: 'Loopgate: Export Requests as HAR',
          filters: { 'HTTP Archive': ['har'] },
          defaultUri: vscode.Uri.joinPath(
            vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(homedir()),
            ids.length === 1 ? `loopgate-${shortId(ids[0]!)}.har` : 'loopgate-traffic.har',
          ),
        });
  if (!uri) return undefined;
  const records: TrafficRecord[] = [];
  for (const id of ids) {
    const e = await fetchEntry(d.host, id).catch(() => undefined);
    // What the client received: a bridged request's answer in the client's protocol, not the upstream's.
    const client = e?.clientResponseBody !== undefined;
    if (e)
      records.push({
        ...e.record,
        requestBody: e.requestBody,
        responseBody: client ? e.clientResponseBody : e.responseBody,
        bodyTruncated:
          e.record.bodyTruncated ||
          e.requestBodyNote === 'cut' ||
          (client ? e.clientResponseBodyNote : e.responseBodyNote) !== undefined ||
          undefined,
      });
  }
  const secrets = [d.host.token, ...(await d.keys.list()).map((k) => k.key)];
  // Exported redacted again, like every export (the entries already are).
  await writePrivateFile(uri.fsPath, JSON.stringify(toHar(records.reverse(), { rules: [], secrets }), null, 2) + '\n');
  void vscode.window.showInformationMessage(
    `Loopgate: exported ${records.length} request${records.length === 1 ? '' : 's'} to ${uri.fsPath}.`,
  );
  return uri.fsPath;
}

export async function filterTraffic(d: TrafficDeps, value?: unknown): Promise<void> {
  const text =
    typeof value === 'string'
      ? value
      : await vscode.window.showInputBox({
          title: 'Filter Traffic',
          prompt:
            'Text (also found in the bodies: a tool name, words of a prompt), status:4xx, status:errors, model:ID, key:NAME; empty shows all',
          value: describeFilter(d.list),
        });
  if (text === undefined) return;
  const filter: Record<string, string> = {};
  const words: string[] = [];
  for (const w of text.split(/\s+/).filter(Boolean)) {
    const m = /^(status|model|key):(.+)$/.exec(w);
    if (m) filter[m[1]!] = m[2]!;
    else words.push(w);
  }
  d.list.setFilter({ ...filter, text: words.join(' ') || undefined });
  void vscode.commands.executeCommand('setContext', 'loopgate.trafficFiltered', text.trim() !== '');
}

function describeFilter(list: TrafficList): string {
  const f = list.filter;
  return [f.text, f.status && `status:${f.status}`, f.model && `model:${f.model}`, f.key && `key:${f.key}`]
    .filter(Boolean)
    .join(' ');
}

/** The view's Group by Session / Show as a List: the setting, so the choice outlasts the window. */
export async function setGrouped(grouped: boolean): Promise<void> {
  await vscode.workspace.getConfiguration('loopgate').update(GROUP_SETTING, grouped, vscode.ConfigurationTarget.Global);
}

export function setPaused(d: TrafficDeps, paused: boolean): void {
  d.list.setPaused(paused);
  void vscode.commands.executeCommand('setContext', 'loopgate.trafficPaused', paused);
}

/**
 * The diff of this turn's body with the session's previous turn's (the one its cache outcome was compared with),
 * opened at the first region that changed.
 */
export async function compareWithPreviousTurn(d: TrafficDeps, arg: unknown): Promise<void> {
  const found = await entryOf(arg, d);
  if (!found) return;
  const previous = found.cache?.previous;
  if (!previous) {
    void vscode.window.showInformationMessage(
      'Loopgate: no earlier turn of this session is in the traffic ring to compare with.',
    );
    return;
  }
  // The turns named as the session panel names them (turn 2 ↔ 3), not by the ring's numbers.
  const entry = found.turnNumbers ? found : await withTurnNumbers(d.host, found);
  const id = entry.record.id;
  await vscode.commands.executeCommand(
    'vscode.diff',
    bodyUri(previous.id, 'request'),
    bodyUri(id, 'request'),
    `${capitalised(turnName(previous.seq, entry.turnNumbers))} ↔ ${turnName(entry.seq, entry.turnNumbers)} (${entry.cache?.summary ?? ''})`,
  );
  const cause = entry.cache?.cause;
  if (cause?.kind !== 'changed' || !entry.requestBody) return;
  let line: number | undefined;
  let earlierLine = '';
  try {
    line = pointerLine(JSON.parse(entry.requestBody), cause.region.pointer);
    // The same place in the previous turn's body (the diff's left side), to find the words that changed.
    const earlier = await vscode.workspace.openTextDocument(bodyUri(previous.id, 'request'));
    const before = pointerLine(JSON.parse(earlier.getText()), cause.region.pointer);
    if (before !== undefined) earlierLine = earlier.lineAt(Math.min(before, earlier.lineCount - 1)).text;
  } catch {
    return;
  }
  const editor = vscode.window.activeTextEditor;
  if (line === undefined || !editor || editor.document.uri.toString() !== bodyUri(id, 'request').toString()) return;
  const text = editor.document.lineAt(Math.min(line, editor.document.lineCount - 1)).text;
  // The changed words, selected and scrolled to: a long line (a system prompt) keeps them on screen.
  const span = changedSpan(earlierLine, text);
  const at = new vscode.Range(line, span.start, line, span.end);
  editor.selection = new vscode.Selection(at.start, at.end);
  editor.revealRange(at, vscode.TextEditorRevealType.InCenter);
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
