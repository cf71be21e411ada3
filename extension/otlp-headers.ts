// The OTLP collector's headers (they usually carry an access token) live only
// in SecretStorage, like the API keys: never in settings. They reach the proxy
// child over IPC with the key, never through argv or its environment.
import * as vscode from 'vscode';
import { SecretChanges } from './secret-changes.js';
import { parseOtlpHeaders } from '../rules/otlp/otlp-config.js';

const SECRET_ID = 'loopgate.otlpHeaders';

export class OtlpHeaderStore implements vscode.Disposable {
  private readonly changes: SecretChanges;
  /** Fires after the stored headers changed (this window or another). */
  readonly onDidChange: vscode.Event<void>;

  constructor(private readonly secrets: vscode.SecretStorage) {
    this.changes = new SecretChanges(secrets, [SECRET_ID]);
    this.onDidChange = this.changes.onDidChange;
  }

  /** The headers in OTEL_EXPORTER_OTLP_HEADERS form (`name=value,…`), or undefined. */
  get(): Thenable<string | undefined> {
    return this.secrets.get(SECRET_ID);
  }

  /** Checks the form first: a bad entry is refused by its position, never echoed. */
  async set(headers: string): Promise<void> {
    const parsed = parseOtlpHeaders(headers, 'the OTLP headers');
    if (!parsed.ok) throw new Error(parsed.problem);
    await this.secrets.store(SECRET_ID, headers.trim());
    await this.changes.announceIfChanged();
  }

  async clear(): Promise<void> {
    await this.secrets.delete(SECRET_ID);
    await this.changes.announceIfChanged();
  }

  dispose(): void {
    this.changes.dispose();
  }
}

/**
 * Loopgate: Set OTLP Headers. `value` is for scripted use (tests): a string
 * sets, '' clears. People get a password box; empty input clears.
 */
export async function setOtlpHeaders(store: OtlpHeaderStore, value?: unknown): Promise<boolean> {
  let headers = typeof value === 'string' ? value : undefined;
  if (headers === undefined) {
    headers = await vscode.window.showInputBox({
      title: 'Loopgate: Set OTLP Headers',
      prompt:
        'Headers for your OpenTelemetry collector, as in OTEL_EXPORTER_OTLP_HEADERS: name=value pairs separated by commas (e.g. authorization=Bearer%20abc,x-team=ml). Kept only in SecretStorage. Empty: remove them.',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => {
        if (!v.trim()) return undefined;
        const parsed = parseOtlpHeaders(v, 'the headers');
        return parsed.ok ? undefined : parsed.problem;
      },
    });
    if (headers === undefined) return false;
  }
  try {
    if (headers.trim() === '') {
      await store.clear();
      void vscode.window.showInformationMessage('Loopgate: the OTLP collector headers were removed.');
    } else {
      await store.set(headers);
      void vscode.window.showInformationMessage(
        'Loopgate: the OTLP collector headers are stored in SecretStorage; the proxy uses them from its next start (it restarts now if it runs).',
      );
    }
    return true;
  } catch (err) {
    void vscode.window.showErrorMessage(`Loopgate: ${(err as Error).message}`);
    return false;
  }
}
