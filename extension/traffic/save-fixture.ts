// `loopgate.saveAsFixture` (issue 34 §1): a Traffic view request, or a whole
// session row, written as cassette exchanges that `loopgate serve --replay DIR`
// answers from. Each entry is read whole through the one local API client,
// converted by the one conversion (fixture-plan.ts → rules/cassettes/cassette-exchange.ts)
// and written by the cassette store, numbered after the files already there.
// The folder asked for defaults to `cassettes/` in the workspace, then to the
// last one used. A notification says what was written and what was left out,
// a folder a link carries out of the workspace included (safe-folder.ts).
import { dirname, isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { nextExchangeNumber, writeExchange } from '../../storage/cassettes/store.js';
import { FolderRefused } from '../../storage/cassettes/safe-folder.js';
import { loadProjectFile } from '../../storage/config/find-project-file.js';
import { localApi } from '../../client/local-api-client.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import { shortId } from '../../presentation/render.js';
import type { DetailEntry } from './detail-html.js';
import { fetchEntry } from './entry-reader.js';
import { describeSaved, planFixtures, type FixturePlan } from './fixture-plan.js';
import { NO_SESSION, type SessionGroup } from './session-groups.js';
import type { TrafficDeps } from './traffic-args.js';

/** Where the last Save as Fixture wrote (workspace state: each project keeps its own). */
const LAST_FOLDER = 'loopgate.fixtureFolder';
const DEFAULT_FOLDER = 'cassettes';

export interface SavedFixtures {
  folder: string;
  files: string[];
  leftOut: FixturePlan['leftOut'];
}

/**
 * `arg`: a request row, a session row, a request id, or the panel's entry (none: the panel's request).
 * `target`: the folder, skipping the question (tests, scripts).
 */
export async function saveAsFixture(
  d: TrafficDeps,
  arg: unknown,
  target?: unknown,
): Promise<SavedFixtures | undefined> {
  const ids = await requestIds(d, arg);
  if (!ids?.length) {
    if (ids)
      void vscode.window.showInformationMessage('Loopgate: select a request or a session in the Traffic view first.');
    return undefined;
  }
  const folder = typeof target === 'string' && target ? absolute(target) : await askFolder(d, ids.length);
  if (!folder) return undefined;
  const entries = await Promise.all(
    ids.map(async (id) => {
      try {
        return { id, entry: await fetchEntry(d.host, id) };
      } catch (err) {
        return { id, problem: (err as Error).message };
      }
    }),
  );
  const secrets = [d.host.token, ...(await d.keys.list()).map((k) => k.key)].filter(Boolean);
  const redactor = createRedactor({ secrets });
  const plan = planFixtures(entries, {
    now: new Date(),
    match: { ignore: cassetteIgnore(folder) },
    scrub: (t) => redactor.knownSecrets(t),
  });
  // After the files already there: adding to a cassette never overwrites one.
  let n = nextExchangeNumber(folder);
  const files: string[] = [];
  const limits = writeLimits(folder);
  for (const x of plan.exchanges) {
    try {
      files.push(writeExchange(folder, n++, x.exchange, limits));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why =
        err instanceof FolderRefused ? err.message : `${folder} cannot be written (${code ?? (err as Error).message})`;
      plan.leftOut.push({ id: x.id, reason: why });
    }
  }
  plan.exchanges = plan.exchanges.filter((x) => !plan.leftOut.some((l) => l.id === x.id));
  await d.state?.update(LAST_FOLDER, folder);
  void tell(plan, folder, files);
  return { folder, files, leftOut: plan.leftOut };
}

/** The requests an argument names, oldest first; undefined when the user was told why there are none. */
async function requestIds(d: TrafficDeps, arg: unknown): Promise<string[] | undefined> {
  if (typeof arg === 'string') return [arg];
  const o = arg as { row?: { record: { id: string } }; group?: SessionGroup } | DetailEntry | undefined;
  if (o && 'group' in o && o.group) return sessionIds(d, o.group);
  if (o && 'row' in o && o.row) return [o.row.record.id];
  if (o && 'record' in o && 'seq' in o) return [o.record.id];
  const open = d.panels.entry?.record.id;
  return open ? [open] : [];
}

/** A session's requests: every turn the proxy still holds (the view may show fewer), else the rows the view holds. */
async function sessionIds(d: TrafficDeps, group: SessionGroup): Promise<string[]> {
  const url = d.host.endpoint?.url;
  if (group.id !== NO_SESSION && url && !d.list.sharedLog) {
    try {
      const turns = (await localApi({ url, token: d.host.token }).session(group.id)).turns;
      if (turns.length) return turns.map((t) => t.id);
    } catch {
      // an older proxy, or the session left its memory: what the view holds
    }
  }
  return group.rows.map((r) => r.record.id).reverse();
}

function workspaceRoot(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/**
 * Nothing is written through a link out of the folder chosen; for the default `cassettes/`, which Loopgate chose
 * and a cloned project may ship as a link, nothing out of the workspace (safe-folder.ts).
 */
function writeLimits(folder: string): { base: string; within?: string } {
  const root = workspaceRoot();
  if (!root) return { base: dirname(folder) };
  return folder === join(root, DEFAULT_FOLDER) ? { base: root, within: root } : { base: root };
}

function absolute(path: string): string {
  const root = workspaceRoot();
  return isAbsolute(path) || !root ? path : join(root, path);
}

/**
 * loopgate.json's `cassette.ignore` (from the folder up, else the workspace's): a replay keys requests with it,
 * so the exchanges must be keyed with it too.
 */
function cassetteIgnore(folder: string): string[] | undefined {
  const root = workspaceRoot();
  const project = loadProjectFile(folder) ?? (root ? loadProjectFile(root) : undefined);
  return project?.ok ? project.read.cassetteIgnore : undefined;
}

/** `cassettes/` in the workspace (created when chosen), the folder used last, or one chosen in the dialog. */
async function askFolder(d: TrafficDeps, count: number): Promise<string | undefined> {
  const root = workspaceRoot();
  const last = d.state?.get<string>(LAST_FOLDER);
  const fallback = root ? join(root, DEFAULT_FOLDER) : undefined;
  const items: Array<vscode.QuickPickItem & { folder?: string }> = [];
  for (const folder of [last, fallback])
    if (folder && !items.some((i) => i.folder === folder))
      items.push({
        label: `$(${folder === last ? 'history' : 'folder'}) ${vscode.workspace.asRelativePath(folder)}`,
        description: folder === last ? 'used last' : 'in the workspace',
        folder,
      });
  items.push({ label: '$(folder-opened) Choose a Folder…' });
  const pick = await vscode.window.showQuickPick(items, {
    title: `Loopgate: Save ${count === 1 ? 'the Request' : `${count} Requests`} as a Cassette Fixture`,
    placeHolder: 'The folder to write the exchanges into (`loopgate serve --replay FOLDER` answers from it)',
  });
  if (!pick) return undefined;
  if (pick.folder) return pick.folder;
  const chosen = await vscode.window.showOpenDialog({
    title: 'Loopgate: Save as Fixture into…',
    canSelectFolders: true,
    canSelectFiles: false,
    canSelectMany: false,
    openLabel: 'Save Here',
    defaultUri: last || root ? vscode.Uri.file((last ?? root)!) : undefined,
  });
  return chosen?.[0]?.fsPath;
}

async function tell(plan: FixturePlan, folder: string, files: string[]): Promise<void> {
  const text = `Loopgate: ${describeSaved(plan, vscode.workspace.asRelativePath(folder), shortId)}`;
  if (!files.length) {
    void vscode.window.showWarningMessage(text);
    return;
  }
  const buttons = ['Open Folder', 'Reveal'] as const;
  const choice = plan.leftOut.length
    ? await vscode.window.showWarningMessage(text, ...buttons)
    : await vscode.window.showInformationMessage(text, ...buttons);
  const uri = vscode.Uri.file(folder);
  const inWorkspace = vscode.workspace.getWorkspaceFolder(uri) !== undefined;
  if (choice === 'Open Folder')
    await vscode.commands.executeCommand(inWorkspace ? 'revealInExplorer' : 'revealFileInOS', uri);
  else if (choice === 'Reveal') await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(files[0]!));
}
