// The chat provider's data, without vscode: what VS Code hands the provider
// (turns of text, tool calls and tool results, tool definitions) and what the
// provider reports back. chat-provider.ts converts to and from VS Code's classes;
// everything else (request bodies, stream reading, errors) works on these and
// is tested in plain Node against the real proxy and simulator.
import type { Protocol } from '../../rules/protocols/index.js';

export type ChatPart =
  | { kind: 'text'; text: string }
  | { kind: 'toolCall'; callId: string; name: string; input: unknown }
  | { kind: 'toolResult'; callId: string; text: string }
  | { kind: 'image'; mimeType: string; data: Uint8Array };

export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  parts: ChatPart[];
}

export interface ChatTool {
  name: string;
  description: string;
  inputSchema?: object;
}

export interface ChatRequest {
  model: string;
  protocol: Protocol;
  turns: ChatTurn[];
  tools: ChatTool[];
  /** VS Code's LanguageModelChatToolMode: Auto, or Required (the model must call a tool). */
  toolMode: 'auto' | 'required';
  /** Stated only when the caller or the model list gave it: a guessed cap is refused by models with a lower one. */
  maxOutputTokens?: number;
}

/** What the provider reports, in order, as the stream arrives. */
export type ChatEvent =
  { kind: 'text'; text: string } | { kind: 'toolCall'; callId: string; name: string; input: object };
