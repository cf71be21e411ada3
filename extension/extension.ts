// Entry of the VS Code extension: wires the concerns together, decides nothing.
import type * as vscode from 'vscode';

export function activate(_context: vscode.ExtensionContext): void {}

export function deactivate(): void {}
