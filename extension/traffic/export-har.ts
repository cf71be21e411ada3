// Export as HAR: one request, or every request the Traffic view's filter shows, as the client received them,
// redacted again on the way out like every export, into a file only the user can read.
import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { shortId } from '../../presentation/render.js';
import { toHar } from '../../storage/log/har.js';
import { writePrivateFile } from '../../storage/log/export-file.js';
import type { TrafficRecord } from '../../core/record.js';
import { fetchEntry } from './entry-reader.js';
import { idOf, type TrafficDeps } from './traffic-args.js';

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
