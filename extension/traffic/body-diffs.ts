// The Traffic view's diffs in VS Code's own diff editor: Compare with…, Show Translation (a bridged request as
// sent and as forwarded) and Compare with Previous Turn (opened at the words that changed). The bodies are
// read-only documents of the TRAFFIC_SCHEME, read from the ring through the proxy.
import * as vscode from 'vscode';
import type { ProxyHost } from '../proxy-host/host.js';
import { shortId } from '../../presentation/render.js';
import { pointerLine } from '../../presentation/pointer-line.js';
import { fetchEntry, withTurnNumbers } from './entry-reader.js';
import { changedSpan } from './changed-words.js';
import { turnName } from './turn-overview.js';
import { entryOf, idOf, type TrafficDeps } from './traffic-args.js';

export const TRAFFIC_SCHEME = 'loopgate-traffic';

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
