// The API keys live only in SecretStorage. This module is their one gateway, and
// moves a key a user put in settings.json into SecretStorage.
import { KEY_NAME } from '../rules/keys/key-list.js';
import * as vscode from 'vscode';
import { SecretChanges } from './secret-changes.js';

/** The keys, as a JSON list of { name, key }: a key belongs to a group, so users hold several. */
const LIST_ID = 'loopgate.apiKeys';
/** Where one key was kept before there could be several; read once, then moved into the list. */
const SECRET_ID = 'loopgate.apiKey';
/** The settings key people reach for; declared deprecated in package.json so it can be removed. */
const LEGACY_SETTING = 'apiKey';

export interface StoredKey {
  name: string;
  key: string;
}

/** Names as the proxy takes them (rules/keys/key-list.ts): header-safe, never key-shaped. */

function parseList(raw: string | undefined): StoredKey[] | undefined {
  if (raw === undefined) return undefined;
  try {
    const list = JSON.parse(raw) as unknown;
    if (!Array.isArray(list)) return [];
    return list.filter((k): k is StoredKey => typeof k?.name === 'string' && typeof k?.key === 'string');
  } catch {
    return [];
  }
}

export class KeyStore implements vscode.Disposable {
  private readonly changes: SecretChanges;
  /** Fires after the stored keys changed (this window or another). */
  readonly onDidChange: vscode.Event<void>;

  constructor(private readonly secrets: vscode.SecretStorage) {
    this.changes = new SecretChanges(secrets, [LIST_ID, SECRET_ID]);
    this.onDidChange = this.changes.onDidChange;
  }

  /** Every key, in the order requests try them. */
  async list(): Promise<StoredKey[]> {
    const list = parseList(await this.secrets.get(LIST_ID));
    if (list) return list;
    const single = await this.secrets.get(SECRET_ID);
    return single ? [{ name: 'key-1', key: single }] : [];
  }

  /** The first key (what a single-key user has). */
  async get(): Promise<string | undefined> {
    return (await this.list())[0]?.key;
  }

  /** Set API Key: this key alone. */
  async set(key: string): Promise<void> {
    await this.write([{ name: 'key-1', key: key.trim() }]);
  }

  /** Add API Key: one more; a repeated key or name is refused with what to do. */
  async add(key: string, name?: string): Promise<StoredKey> {
    const list = await this.list();
    const k = key.trim();
    const same = list.find((s) => s.key === k);
    if (same) throw new Error(`this key is already stored, as "${same.name}".`);
    if (name !== undefined && !KEY_NAME.test(name))
      throw new Error('a key name is 1–32 letters, digits, "_", "." or "-".');
    if (name !== undefined && list.some((s) => s.name === name))
      throw new Error(`a key named "${name}" exists: choose another name or rename that one.`);
    let n = list.length + 1;
    while (list.some((s) => s.name === `key-${n}`)) n++;
    const added = { name: name ?? `key-${n}`, key: k };
    await this.write([...list, added]);
    return added;
  }

  async remove(name: string): Promise<boolean> {
    const list = await this.list();
    const rest = list.filter((s) => s.name !== name);
    if (rest.length === list.length) return false;
    await this.write(rest);
    return true;
  }

  async rename(from: string, to: string): Promise<void> {
    const list = await this.list();
    if (!KEY_NAME.test(to)) throw new Error('a key name is 1–32 letters, digits, "_", "." or "-".');
    if (list.some((s) => s.name === to)) throw new Error(`a key named "${to}" exists.`);
    if (!list.some((s) => s.name === from)) throw new Error(`no key is named "${from}".`);
    await this.write(list.map((s) => (s.name === from ? { ...s, name: to } : s)));
  }

  async clear(): Promise<void> {
    await this.secrets.delete(LIST_ID);
    await this.secrets.delete(SECRET_ID);
    await this.changes.announceIfChanged();
  }

  private async write(list: StoredKey[]): Promise<void> {
    await this.secrets.store(LIST_ID, JSON.stringify(list));
    // The single-key entry of older versions is now in the list.
    if (await this.secrets.get(SECRET_ID)) await this.secrets.delete(SECRET_ID);
    await this.changes.announceIfChanged();
  }

  dispose(): void {
    this.changes.dispose();
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
  return {
    globalValue: info?.globalValue,
    workspaceValue: info?.workspaceValue,
    workspaceFolderValue: info?.workspaceFolderValue,
  };
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
