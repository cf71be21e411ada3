// One change event for a few SecretStorage entries, announced once whoever
// reports it first: another window's write arrives only through
// secrets.onDidChange, and our own writes announce themselves (VS Code 1.139
// does not report an extension its own writes there; 1.100 does).
import * as vscode from 'vscode';

export class SecretChanges implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly subscription: vscode.Disposable;
  private seen: string | undefined;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly ids: readonly string[],
  ) {
    this.subscription = secrets.onDidChange((e) => {
      if (ids.includes(e.key)) void this.announceIfChanged();
    });
  }

  /** Call after writing: fires when the entries differ from what was last announced. */
  async announceIfChanged(): Promise<void> {
    const now = JSON.stringify(await Promise.all(this.ids.map((id) => this.secrets.get(id))));
    if (now === this.seen) return;
    this.seen = now;
    this.changed.fire();
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
