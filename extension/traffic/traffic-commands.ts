// The Traffic view's commands: open a request, Replay, Edit and Resend (an
// untitled JSON document, sent with a CodeLens or the command), Copy as curl,
// and the list's filter, pause and grouping (the diffs are body-diffs.ts, Export
// as HAR export-har.ts). Everything goes through the
// proxy with the local token; the key is never here.
import * as vscode from 'vscode';
import { replayRequest } from '../../rules/replay/replay-request.js';
import { curlCommand } from '../../rules/replay/replay-request.js';
import { sendReplay } from '../../client/send-replay.js';
import { shortId } from '../../presentation/render.js';
import { cliInvocation } from '../../cli/invocation.js';
import type { DetailEntry } from './detail-html.js';
import { TrafficUnavailable } from './entry-reader.js';
import { sharedEntry } from './shared-log.js';
import { entryOf, idOf, type TrafficDeps } from './traffic-args.js';
import type { TrafficList } from './traffic-list.js';
import { GROUP_SETTING } from './traffic-tree.js';

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
