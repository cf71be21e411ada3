// What the Traffic view's commands share: their dependencies and how a command's argument (a tree item, a
// request id, the panel's entry) becomes the request it acts on.
import * as vscode from 'vscode';
import type { ProxyHost } from '../proxy-host/host.js';
import type { KeyStore } from '../secrets.js';
import type { DetailPanels } from './detail-panel.js';
import type { DetailEntry } from './detail-html.js';
import { fetchEntry, TrafficUnavailable } from './entry-reader.js';
import type { TrafficList } from './traffic-list.js';
import type { TrafficItem } from './traffic-tree.js';

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
export function idOf(arg: unknown, d: TrafficDeps): string | undefined {
  if (typeof arg === 'string') return arg;
  const row = (arg as TrafficItem | undefined)?.row;
  if (row) return row.record.id;
  return d.panels.entry?.record.id;
}

export async function entryOf(arg: unknown, d: TrafficDeps): Promise<DetailEntry | undefined> {
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
