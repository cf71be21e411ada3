// The Language Model Chat Provider API (final in VS Code 1.104), declared here
// from the 1.104 typings: the extension's engine is ^1.100 and its @types/vscode
// 1.100, so these names exist only behind the runtime check in registerChatProvider.
import type * as vscode from 'vscode';

export interface LanguageModelChatInformation {
  readonly id: string;
  readonly name: string;
  readonly family: string;
  readonly version: string;
  readonly tooltip?: string;
  readonly detail?: string;
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
  readonly capabilities: { readonly imageInput?: boolean; readonly toolCalling?: boolean | number };
}

export interface LanguageModelChatRequestMessage {
  readonly role: vscode.LanguageModelChatMessageRole;
  readonly content: ReadonlyArray<unknown>;
  readonly name: string | undefined;
}

export interface ProvideLanguageModelChatResponseOptions {
  readonly modelOptions?: { readonly [name: string]: unknown };
  readonly tools?: readonly vscode.LanguageModelChatTool[];
  readonly toolMode: vscode.LanguageModelChatToolMode;
}

export type LanguageModelResponsePart =
  vscode.LanguageModelTextPart | vscode.LanguageModelToolResultPart | vscode.LanguageModelToolCallPart;

export interface LanguageModelChatProvider<T extends LanguageModelChatInformation = LanguageModelChatInformation> {
  readonly onDidChangeLanguageModelChatInformation?: vscode.Event<void>;
  /**
   * `configuration`: VS Code 1.1xx+ (the contribution's `configuration` schema) calls once per
   * provider group the user added under Manage Models, with that group's values (secrets resolved).
   */
  provideLanguageModelChatInformation(
    options: { readonly silent: boolean; readonly configuration?: { readonly [name: string]: unknown } },
    token: vscode.CancellationToken,
  ): vscode.ProviderResult<T[]>;
  provideLanguageModelChatResponse(
    model: T,
    messages: readonly LanguageModelChatRequestMessage[],
    options: ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Thenable<void>;
  provideTokenCount(
    model: T,
    text: string | LanguageModelChatRequestMessage,
    token: vscode.CancellationToken,
  ): Thenable<number>;
}

export interface ChatProviderRegistry {
  registerLanguageModelChatProvider(vendor: string, provider: LanguageModelChatProvider): vscode.Disposable;
}

/** `vscode.lm` where it can register chat providers (1.104+), else undefined. */
export function chatProviderRegistry(lm: unknown): ChatProviderRegistry | undefined {
  const candidate = lm as Partial<ChatProviderRegistry> | undefined;
  return typeof candidate?.registerLanguageModelChatProvider === 'function'
    ? (candidate as ChatProviderRegistry)
    : undefined;
}
