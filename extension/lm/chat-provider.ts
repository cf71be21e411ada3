// The `loopgate` vendor in VS Code's chat (1.104+): the key groups' models,
// answered through the local proxy in each model's best native protocol.
// Conversion between VS Code's classes and extension/lm's plain data happens
// here and nowhere else.
import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import type { ProxyHost } from '../proxy-host/host.js';
import { sendChat, ChatRequestFailed } from './chat-client.js';
import { ChatStreamError } from './chat-stream.js';
import type { ChatPart, ChatTurn } from './chat-types.js';
import type { FailureKind } from './chat-errors.js';
import { chatModels, nativeProtocolsFrom, type ChatModelInfo, type NativeProtocols } from './model-catalog.js';
import type {
  LanguageModelChatInformation,
  LanguageModelChatProvider,
  LanguageModelChatRequestMessage,
  LanguageModelResponsePart,
  ProvideLanguageModelChatResponseOptions,
} from './lm-api.js';
import { turnText } from './request-body.js';
import { estimateTokens } from './token-estimate.js';
import { localApi } from '../../client/local-api-client.js';
import { type ModelEntry } from '../../core/routing-facts.js';
import { type ModelOverrides } from '../settings.js';

export const VENDOR = 'loopgate';

type ModelInformation = LanguageModelChatInformation & { readonly loopgate: ChatModelInfo };

export interface ChatProviderDeps {
  host: ProxyHost;
  /** Fires when the proxy's model lists may have changed (the Model Explorer refreshed). */
  onDidChangeModels: vscode.Event<void>;
  /**
   * The Model Explorer's list (its last GET /v1/models through the proxy, after
   * one in flight): the one cache both read, so asking for the chat models costs
   * no request upstream. `entries` when it loaded; `failure` says why not.
   */
  readModels(): Promise<{ entries: readonly ModelEntry[] } | { failure: string }>;
  readOverrides(): ModelOverrides;
  log: vscode.LogOutputChannel;
  /**
   * A key entered in VS Code's Manage Models (a "Loopgate" group): checked and added to
   * Loopgate's keys like Add API Key does; resolves with whether it was added and what to say
   * (undefined: Loopgate holds it already).
   */
  adoptKey(key: string): Promise<{ saved: boolean; message: string } | undefined>;
}

export class LoopgateChatProvider implements LanguageModelChatProvider<ModelInformation>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeLanguageModelChatInformation = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];
  private known: string[] = [];
  /** The last list the proxy gave, per proxy: kept while a later list fails (see below). */
  private lastGood: { url: string; models: ModelInformation[] } | undefined;
  private lastFailure: string | undefined;
  /** Keys from Manage Models already handed to adoptKey (sha256, not the key). */
  private readonly adopted = new Set<string>();

  constructor(private readonly deps: ChatProviderDeps) {
    this.subscriptions = [
      deps.onDidChangeModels(() => this.changed.fire()),
      deps.host.onDidChangeState(() => this.changed.fire()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('loopgate.chat') && this.changed.fire()),
    ];
  }

  async provideLanguageModelChatInformation(
    options: { readonly silent: boolean; readonly configuration?: { readonly [name: string]: unknown } },
    _token: vscode.CancellationToken,
  ): Promise<ModelInformation[]> {
    // A group from Manage Models: its key joins Loopgate's keys. The models are listed once, by
    // the call without a group (the proxy's list covers every key), not again under each group.
    if (options.configuration) {
      await this.adopt(options.configuration.apiKey);
      return [];
    }
    const endpoint = this.deps.host.endpoint;
    if (!endpoint) return [];
    // A key revoked or a service down must not make the models vanish from an open chat without a word:
    // the last list stays, and a request then fails with the diagnosis (re-copy the key, …).
    const previous = this.lastGood?.url === endpoint.url ? this.lastGood.models : [];
    // Consumers ask again and again (selectChatModels in a retry loop): this answers from the
    // Model Explorer's list, which is fetched when the proxy, its keys or the settings change.
    const list = await this.deps.readModels();
    if ('failure' in list) {
      // Once per failure, not once per question.
      if (list.failure !== this.lastFailure)
        this.deps.log.warn(
          `chat models: ${list.failure}; ${previous.length ? 'keeping the last list' : 'no models to offer'}`,
        );
      this.lastFailure = list.failure;
      return previous;
    }
    this.lastFailure = undefined;
    this.known = list.entries.map((m) => m.id);
    // Which protocol each model is asked in: the proxy's own routing (loopback, from its cached lists).
    const models = chatModels(
      list.entries,
      this.deps.readOverrides(),
      await this.routing(endpoint.url, AbortSignal.timeout(5000)),
    ).map(information);
    this.lastGood = { url: endpoint.url, models };
    return models;
  }

  /** VS Code asks for each group on every model refresh: a key is checked (upstream) once per session. */
  private async adopt(value: unknown): Promise<void> {
    if (typeof value !== 'string' || !value.trim()) return;
    const key = value.trim();
    const id = createHash('sha256').update(key).digest('hex');
    if (this.adopted.has(id)) return;
    this.adopted.add(id);
    const result = await this.deps
      .adoptKey(key)
      .catch((err: unknown) => ({ saved: false, message: (err as Error).message }));
    // The message names the check's outcome, never the key.
    if (result?.saved)
      this.deps.log.info(`Manage Models: the Loopgate group's key was added to Loopgate's keys. ${result.message}`);
    else if (result) this.deps.log.warn(`Manage Models: the Loopgate group's key was not added: ${result.message}`);
  }

  /** How the proxy routes each model (its own rule, on its state); undefined from a proxy that cannot say. */
  private async routing(url: string, signal: AbortSignal): Promise<NativeProtocols | undefined> {
    try {
      return nativeProtocolsFrom(await localApi({ url, token: this.deps.host.token }).keys({ signal }));
    } catch {
      return undefined;
    }
  }

  async provideLanguageModelChatResponse(
    model: ModelInformation,
    messages: readonly LanguageModelChatRequestMessage[],
    options: ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const endpoint = this.deps.host.endpoint;
    if (!endpoint) throw new vscode.LanguageModelError('The Loopgate proxy is not running: run Loopgate: Start Proxy.');
    const abort = abortOn(token);
    const info = model.loopgate;
    try {
      await sendChat({
        proxyUrl: endpoint.url,
        token: this.deps.host.token,
        knownModels: this.known,
        signal: abort.signal,
        request: {
          model: info.id,
          protocol: info.protocol,
          turns: messages.map(toTurn),
          tools: (options.tools ?? []).map((t) => ({
            name: t.name,
            description: t.description,
            inputSchema: t.inputSchema,
          })),
          toolMode: options.toolMode === vscode.LanguageModelChatToolMode.Required ? 'required' : 'auto',
          maxOutputTokens: maxTokens(options.modelOptions, info),
        },
        onEvent: (e) =>
          progress.report(
            e.kind === 'text'
              ? new vscode.LanguageModelTextPart(e.text)
              : new vscode.LanguageModelToolCallPart(e.callId, e.name, e.input),
          ),
      });
    } catch (err) {
      if (token.isCancellationRequested) return; // the caller asked for it: nothing to report
      throw toLanguageModelError(err);
    } finally {
      abort.dispose();
    }
  }

  async provideTokenCount(_model: ModelInformation, text: string | LanguageModelChatRequestMessage): Promise<number> {
    return estimateTokens(typeof text === 'string' ? text : turnText(toTurn(text)));
  }

  dispose(): void {
    this.changed.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}

function information(m: ChatModelInfo): ModelInformation {
  return {
    id: m.id,
    name: m.name,
    family: m.family,
    version: m.version,
    detail: m.detail,
    tooltip: m.tooltip,
    maxInputTokens: m.maxInputTokens,
    maxOutputTokens: m.maxOutputTokens,
    capabilities: { toolCalling: m.toolCalling, imageInput: m.imageInput },
    loopgate: m,
  };
}

/** A caller's `max_tokens`-like model option within the model's limit, else the limit the list gave, else nothing. */
function maxTokens(
  modelOptions: { readonly [name: string]: unknown } | undefined,
  info: ChatModelInfo,
): number | undefined {
  const asked = [modelOptions?.max_tokens, modelOptions?.maxTokens, modelOptions?.max_output_tokens].find(
    (v) => typeof v === 'number' && v > 0,
  ) as number | undefined;
  if (asked !== undefined) return Math.min(asked, info.maxOutputTokens);
  return info.outputLimitKnown ? info.maxOutputTokens : undefined;
}

/** VS Code's message → plain data. Parts VS Code may add later are skipped, never guessed at. */
function toTurn(message: LanguageModelChatRequestMessage): ChatTurn {
  const role =
    message.role === vscode.LanguageModelChatMessageRole.Assistant
      ? 'assistant'
      : message.role === vscode.LanguageModelChatMessageRole.User
        ? 'user'
        : 'system';
  const parts: ChatPart[] = [];
  for (const part of message.content) {
    if (part instanceof vscode.LanguageModelTextPart) parts.push({ kind: 'text', text: part.value });
    else if (part instanceof vscode.LanguageModelToolCallPart)
      parts.push({ kind: 'toolCall', callId: part.callId, name: part.name, input: part.input });
    else if (isToolResult(part))
      parts.push({ kind: 'toolResult', callId: part.callId, text: resultText(part.content) });
    else if (isImage(part)) parts.push({ kind: 'image', mimeType: part.mimeType, data: part.data });
  }
  return { role, parts };
}

/**
 * A tool result as text: text parts as they are, prompt-tsx parts (Copilot's own tools) as JSON,
 * data parts of text or JSON decoded. Images in a tool result are not passed on.
 */
function resultText(content: readonly unknown[]): string {
  return content
    .map((c) => {
      if (c instanceof vscode.LanguageModelTextPart) return c.value;
      if (typeof c === 'string') return c;
      const part = c as { value?: unknown; mimeType?: unknown; data?: unknown };
      if (typeof part?.mimeType === 'string' && part.data instanceof Uint8Array) {
        return /^text\/|json/.test(part.mimeType) ? new TextDecoder().decode(part.data) : '';
      }
      if (part?.value !== undefined) return typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
      return '';
    })
    .join('');
}

/** LanguageModelToolResultPart, or a newer class of the same shape (LanguageModelToolResultPart2). */
function isToolResult(part: unknown): part is { callId: string; content: readonly unknown[] } {
  if (part instanceof vscode.LanguageModelToolResultPart) return true;
  const p = part as { callId?: unknown; content?: unknown; name?: unknown };
  return typeof p?.callId === 'string' && Array.isArray(p.content) && p.name === undefined;
}

/** LanguageModelDataPart (1.105+) carrying an image. */
function isImage(part: unknown): part is { mimeType: string; data: Uint8Array } {
  const p = part as { mimeType?: unknown; data?: unknown };
  return typeof p?.mimeType === 'string' && p.mimeType.startsWith('image/') && p.data instanceof Uint8Array;
}

function abortOn(token: vscode.CancellationToken): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  if (token.isCancellationRequested) controller.abort();
  const sub = token.onCancellationRequested(() => controller.abort());
  return { signal: controller.signal, dispose: () => sub.dispose() };
}

const FACTORIES: Record<Exclude<FailureKind, 'other'>, (message: string) => vscode.LanguageModelError> = {
  noPermissions: (m) => vscode.LanguageModelError.NoPermissions(m),
  notFound: (m) => vscode.LanguageModelError.NotFound(m),
  blocked: (m) => vscode.LanguageModelError.Blocked(m),
};

function toLanguageModelError(err: unknown): vscode.LanguageModelError {
  if (err instanceof ChatRequestFailed) {
    const f = err.failure;
    const message = `Loopgate: ${f.message}${f.diagnosis ? ` [${f.diagnosis}]` : ''}`;
    return f.kind === 'other' ? new vscode.LanguageModelError(message) : FACTORIES[f.kind](message);
  }
  if (err instanceof ChatStreamError)
    return new vscode.LanguageModelError(`Loopgate: the service ended the answer with an error: ${err.message}`);
  return new vscode.LanguageModelError(
    `Loopgate: the request through the proxy failed (${(err as Error).message}). Is the proxy running? Loopgate: Start Proxy.`,
  );
}
