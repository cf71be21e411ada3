// The API key lives only in SecretStorage. This module is its one gateway, and
// moves a key a user put in settings.json into SecretStorage.
import * as vscode from 'vscode';

const SECRET_ID = 'loopgate.apiKey';
/** The settings key people reach for; declared deprecated in package.json so it can be removed. */
const LEGACY_SETTING = 'apiKey';

export class KeyStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires after the stored key changed (this window or another). */
  readonly onDidChange = this.changed.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly secrets: vscode.SecretStorage) {
    this.subscription = secrets.onDidChange((e) => {
      if (e.key === SECRET_ID) this.changed.fire();
    });
  }

  get(): Thenable<string | undefined> {
    return this.secrets.get(SECRET_ID);
  }

  async set(key: string): Promise<void> {
    await this.secrets.store(SECRET_ID, key.trim());
  }

  async clear(): Promise<void> {
    await this.secrets.delete(SECRET_ID);
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

type LegacyField = 'globalValue' | 'workspaceValue' | 'workspaceFolderValue';

const TARGETS: Array<[LegacyField, vscode.ConfigurationTarget]> = [
  ['globalValue', vscode.ConfigurationTarget.Global],
  ['workspaceValue', vscode.ConfigurationTarget.Workspace],
  ['workspaceFolderValue', vscode.ConfigurationTarget.WorkspaceFolder],
];

function inspectLegacy(): Record<LegacyField, string | undefined> {
  const info = vscode.workspace.getConfiguration('loopgate').inspect<string>(LEGACY_SETTING);
  return { globalValue: info?.globalValue, workspaceValue: info?.workspaceValue, workspaceFolderValue: info?.workspaceFolderValue };
}

/**
 * Moves `loopgate.apiKey` from any settings.json into SecretStorage, removes it
 * there, and tells the user.
 * Returns true when a key was moved.
 */
export async function migrateKeyFromSettings(store: KeyStore): Promise<boolean> {
  const found = inspectLegacy();
  const present = TARGETS.filter(([field]) => typeof found[field] === 'string');
  if (present.length === 0) return false;
  // A user's own settings win. A key that only a workspace's settings carry (a cloned repo) is
  // taken only when none is stored yet: a repo must not be able to replace the user's key.
  const global = found.globalValue?.trim();
  const fromWorkspace = [found.workspaceFolderValue, found.workspaceValue].map((v) => v?.trim()).find((v) => v);
  const key = global || (fromWorkspace && !(await store.get()) ? fromWorkspace : undefined);
  if (key) await store.set(key);
  const config = vscode.workspace.getConfiguration('loopgate');
  for (const [, target] of present) {
    try {
      await config.update(LEGACY_SETTING, undefined, target);
    } catch (err) {
      void vscode.window.showErrorMessage(
        `Loopgate: could not remove loopgate.apiKey from settings (${(err as Error).message}). Delete it from settings.json by hand.`,
      );
    }
  }
  if (key) {
    void vscode.window.showInformationMessage(
      'Loopgate: the API key found in settings.json (loopgate.apiKey) was moved into VS Code SecretStorage and removed from settings. Keys in settings files end up in backups, screenshots and commits.',
    );
  } else if (fromWorkspace) {
    void vscode.window.showWarningMessage(
      "Loopgate: this workspace's settings carried an API key (loopgate.apiKey). It was removed from them; your stored key was kept.",
    );
  }
  return Boolean(key);
}
