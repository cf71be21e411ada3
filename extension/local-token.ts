// The local token clients use as their API key, shared with the CLI through its
// 0600 file. If the file cannot be written, a per-session token keeps this window working.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { loadOrCreateToken, TOKEN_PREFIX } from '../storage/config/token-file.js';

export function localToken(log: vscode.LogOutputChannel): string {
  try {
    return loadOrCreateToken();
  } catch (err) {
    const message = `Could not read or create the local token file (${(err as Error).message}); using a token for this session only. Tools outside VS Code will not know it.`;
    log.error(message);
    void vscode.window.showWarningMessage(`Loopgate: ${message}`);
    return TOKEN_PREFIX + randomBytes(32).toString('base64url');
  }
}
