// A chat request in each protocol's own shape: the path under the proxy and the
// JSON body, always streamed. Tool definitions, tool calls and tool results map
// both ways (chat-stream.ts reads the answers).
import { PROTOCOL_TABLE, type Protocol } from '../../rules/protocols/index.js';
import { OUTPUT_TEXT } from '../../rules/protocols/conversation-parts.js';
import type { ChatPart, ChatRequest, ChatTurn } from './chat-types.js';

export interface WireRequest {
  /** Relative to the proxy origin, e.g. /v1/chat/completions. */
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** README, "Models in VS Code's chat". */
export const MESSAGES_DEFAULT_MAX_TOKENS = 8192;

const text = (parts: ChatPart[]) => parts.flatMap((p) => (p.kind === 'text' ? [p.text] : [])).join('');
const base64 = (data: Uint8Array) => Buffer.from(data).toString('base64');
const inputOf = (input: unknown): Record<string, unknown> =>
  typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
const schemaOf = (schema: object | undefined) => schema ?? { type: 'object', properties: {} };

export function wireRequest(req: ChatRequest): WireRequest {
  const path = PROTOCOL_TABLE[req.protocol].path;
  const build: Record<Protocol, (r: ChatRequest) => WireRequest['body']> = {
    chat: chatBody,
    responses: responsesBody,
    messages: messagesBody,
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    ...PROTOCOL_TABLE[req.protocol].clientHeaders,
  };
  return { path, headers, body: build[req.protocol](req) };
}

function chatBody(req: ChatRequest): Record<string, unknown> {
  const messages: unknown[] = [];
  for (const turn of req.turns) {
    if (turn.role === 'assistant') {
      const calls = turn.parts.flatMap((p) =>
        p.kind === 'toolCall'
          ? [
              {
                id: p.callId,
                type: 'function',
                function: { name: p.name, arguments: JSON.stringify(inputOf(p.input)) },
              },
            ]
          : [],
      );
      const t = text(turn.parts);
      // An assistant message with neither text nor calls is refused (400).
      if (t || calls.length)
        messages.push({ role: 'assistant', content: t || null, ...(calls.length ? { tool_calls: calls } : {}) });
      continue;
    }
    // Tool results are their own messages, right after the assistant's calls.
    for (const p of turn.parts)
      if (p.kind === 'toolResult') messages.push({ role: 'tool', tool_call_id: p.callId, content: p.text });
    const images = turn.parts.flatMap((p) =>
      p.kind === 'image'
        ? [{ type: 'image_url', image_url: { url: `data:${p.mimeType};base64,${base64(p.data)}` } }]
        : [],
    );
    const t = text(turn.parts);
    if (images.length)
      messages.push({ role: turn.role, content: [...(t ? [{ type: 'text', text: t }] : []), ...images] });
    else if (t) messages.push({ role: turn.role, content: t });
  }
  return {
    model: req.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
    ...(req.maxOutputTokens ? { max_completion_tokens: req.maxOutputTokens } : {}),
    ...(req.tools.length
      ? {
          tools: req.tools.map((t) => ({
            type: 'function',
            function: { name: t.name, description: t.description, parameters: schemaOf(t.inputSchema) },
          })),
          tool_choice: req.toolMode === 'required' ? 'required' : 'auto',
        }
      : {}),
  };
}

function responsesBody(req: ChatRequest): Record<string, unknown> {
  const input: unknown[] = [];
  let instructions = '';
  for (const turn of req.turns) {
    if (turn.role === 'system') {
      instructions += (instructions ? '\n\n' : '') + text(turn.parts);
      continue;
    }
    if (turn.role === 'assistant') {
      const t = text(turn.parts);
      if (t) input.push({ role: 'assistant', content: [{ type: OUTPUT_TEXT, text: t }] });
      for (const p of turn.parts)
        if (p.kind === 'toolCall')
          input.push({
            type: 'function_call',
            call_id: p.callId,
            name: p.name,
            arguments: JSON.stringify(inputOf(p.input)),
          });
      continue;
    }
    for (const p of turn.parts)
      if (p.kind === 'toolResult') input.push({ type: 'function_call_output', call_id: p.callId, output: p.text });
    const content = turn.parts.flatMap((p): unknown[] =>
      p.kind === 'text'
        ? [{ type: 'input_text', text: p.text }]
        : p.kind === 'image'
          ? [{ type: 'input_image', image_url: `data:${p.mimeType};base64,${base64(p.data)}` }]
          : [],
    );
    if (content.length) input.push({ role: 'user', content });
  }
  return {
    model: req.model,
    input,
    ...(instructions ? { instructions } : {}),
    stream: true,
    // Nothing kept upstream: VS Code sends the whole conversation every time.
    store: false,
    ...(req.maxOutputTokens ? { max_output_tokens: req.maxOutputTokens } : {}),
    ...(req.tools.length
      ? {
          tools: req.tools.map((t) => ({
            type: 'function',
            name: t.name,
            description: t.description,
            parameters: schemaOf(t.inputSchema),
          })),
          tool_choice: req.toolMode === 'required' ? 'required' : 'auto',
        }
      : {}),
  };
}

function messagesBody(req: ChatRequest): Record<string, unknown> {
  const messages: Array<{ role: 'user' | 'assistant'; content: unknown[] }> = [];
  let system = '';
  const push = (role: 'user' | 'assistant', blocks: unknown[]) => {
    if (blocks.length === 0) return;
    // Messages wants user and assistant to alternate: consecutive turns of one role merge.
    const last = messages[messages.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const turn of req.turns) {
    if (turn.role === 'system') {
      system += (system ? '\n\n' : '') + text(turn.parts);
      continue;
    }
    if (turn.role === 'assistant') {
      push('assistant', turn.parts.flatMap(assistantBlock));
      continue;
    }
    // tool_result blocks first: they answer the assistant turn just before.
    const results = turn.parts.flatMap((p) =>
      p.kind === 'toolResult' ? [{ type: 'tool_result', tool_use_id: p.callId, content: p.text }] : [],
    );
    const rest = turn.parts.flatMap((p): unknown[] =>
      p.kind === 'text' && p.text
        ? [{ type: 'text', text: p.text }]
        : p.kind === 'image'
          ? [{ type: 'image', source: { type: 'base64', media_type: p.mimeType, data: base64(p.data) } }]
          : [],
    );
    push('user', [...results, ...rest]);
  }
  return {
    model: req.model,
    // Messages requires it: without a known limit, one every current Claude model accepts.
    max_tokens: req.maxOutputTokens ?? MESSAGES_DEFAULT_MAX_TOKENS,
    messages,
    ...(system ? { system } : {}),
    stream: true,
    ...(req.tools.length
      ? {
          tools: req.tools.map((t) => ({
            name: t.name,
            description: t.description,
            input_schema: schemaOf(t.inputSchema),
          })),
          tool_choice: { type: req.toolMode === 'required' ? 'any' : 'auto' },
        }
      : {}),
  };
}

function assistantBlock(p: ChatPart): unknown[] {
  if (p.kind === 'text') return p.text ? [{ type: 'text', text: p.text }] : [];
  if (p.kind === 'toolCall') return [{ type: 'tool_use', id: p.callId, name: p.name, input: inputOf(p.input) }];
  return [];
}

/** The turns' text, for a token estimate. */
export function turnText(turn: ChatTurn): string {
  return turn.parts
    .map((p) =>
      p.kind === 'text' || p.kind === 'toolResult'
        ? p.text
        : p.kind === 'toolCall'
          ? `${p.name}${JSON.stringify(p.input)}`
          : '',
    )
    .join('');
}
