// Starts the Loopgate language server (dist/server.js, over IPC) and keeps it
// told about the model list and the proxy URL, so diagnostics refresh in open
// files without reopening them.
import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type DocumentSelector, type ServerOptions } from 'vscode-languageclient/node';
import { childEnvOverrides } from './child-env.js';
import { STATE_NOTIFICATION, type LoopgateInitOptions, type LoopgateState } from '../language-server/state.js';

export interface LanguageClientHooks {
  /** The key's model IDs; undefined when not known (no model diagnostics then). */
  getModels(): string[] | undefined;
  /** The running proxy's origin (e.g. http://127.0.0.1:8787); undefined when it is not running. */
  getProxyUrl(): string | undefined;
  /** Fires when the model list changes (and may fire when the proxy URL does). */
  onDidChangeModels: vscode.Event<unknown>;
  /** Fires when the proxy starts, stops or moves. */
  onDidChangeProxyUrl?: vscode.Event<unknown>;
}

const SCHEMES = ['file', 'untitled'];
const LANGUAGES = [
  'json',
  'jsonc',
  'yaml',
  'toml',
  'javascript',
  'javascriptreact',
  'typescript',
  'typescriptreact',
  'python',
  'dotenv',
];

/** The files the server checks: dotenv and TOML by name (their language id varies by installed extensions). */
const DOCUMENT_SELECTOR: DocumentSelector = SCHEMES.flatMap((scheme) => [
  { scheme, pattern: '**/.env' },
  { scheme, pattern: '**/.env.*' },
  { scheme, pattern: '**/*.toml' },
  ...LANGUAGES.map((language) => ({ scheme, language })),
]);

/**
 * Set on globalThis while a client runs: the real-VS-Code test uses it to tell
 * whether the extension started the client (all extensions share one host).
 */
export const CLIENT_MARKER = Symbol.for('loopgate.languageClient');

export function startLanguageClient(context: vscode.ExtensionContext, hooks: LanguageClientHooks): vscode.Disposable {
  const module = context.asAbsolutePath('dist/server.js');
  // The server never needs credentials: keep them out of its environment. The client
  // merges `env` over process.env, so credentials must be overridden, not just omitted.
  const options = { env: childEnvOverrides(process.env) };
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc, options },
    debug: { module, transport: TransportKind.ipc, options },
  };
  let last = '';
  const state = (): LoopgateState => ({ models: hooks.getModels() ?? null, proxyUrl: hooks.getProxyUrl() ?? null });
  const client = new LanguageClient('loopgate', 'Loopgate Diagnostics', serverOptions, {
    documentSelector: DOCUMENT_SELECTOR,
    initializationOptions: (): LoopgateInitOptions => {
      const initial = state();
      last = JSON.stringify(initial);
      return { ...initial, commands: true };
    },
  });

  const push = (): void => {
    if (!client.isRunning()) return;
    const next = state();
    const key = JSON.stringify(next);
    if (key === last) return;
    last = key;
    client.sendNotification(STATE_NOTIFICATION, next).catch(() => undefined);
  };
  const subscriptions = [
    hooks.onDidChangeModels(push),
    ...(hooks.onDidChangeProxyUrl ? [hooks.onDidChangeProxyUrl(push)] : []),
  ];
  (globalThis as Record<symbol, unknown>)[CLIENT_MARKER] = client;
  const started = client.start().then(
    () => push(), // in case the state moved while the server was starting
    (err: unknown) =>
      client.outputChannel.appendLine(
        `Loopgate: the language server did not start: ${(err as Error)?.message ?? String(err)}`,
      ),
  );

  return {
    dispose: async () => {
      for (const s of subscriptions) s.dispose();
      if ((globalThis as Record<symbol, unknown>)[CLIENT_MARKER] === client)
        delete (globalThis as Record<symbol, unknown>)[CLIENT_MARKER];
      await started; // a starting client cannot be stopped
      if (client.isRunning()) await client.stop().catch(() => undefined);
    },
  };
}
