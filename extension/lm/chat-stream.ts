// Reads a streamed answer in any of the three protocols into ChatEvents: text
// as each delta arrives, a tool call once its arguments are complete. An error
// event inside the stream becomes a ChatStreamError (the status was 200 by then).
import { eventTooLargeMessage, SseReader, type SseMessage } from '../../rules/wire/sse.js';
import type { Protocol } from '../../rules/protocols/index.js';
import { MESSAGES_EVENTS } from '../../rules/protocols/anthropic-messages.js';
import { CHAT_DONE } from '../../rules/protocols/chat-completions.js';
import { RESPONSES_EVENTS } from '../../rules/protocols/responses.js';
import type { ChatEvent } from './chat-types.js';

export class ChatStreamError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

interface PendingCall {
  id: string;
  name: string;
  args: string;
  /** Messages: the input came with the start block; deltas, if any follow, replace it. */
  fromStart?: boolean;
}

export class ChatStream {
  private readonly sse = new SseReader();
  private readonly calls = new Map<number, PendingCall>();
  /** A stream that ends without its protocol's last event was cut off. */
  finished = false;

  /** How this protocol's events are read (a Record, so a new protocol needs its reader to compile). */
  private readonly reader: {
    read(event: string | undefined, json: Record<string, unknown>): ChatEvent[];
    flushAtEnd: boolean;
  };

  constructor(protocol: Protocol) {
    const readers: Record<Protocol, ChatStream['reader']> = {
      // Chat Completions streams may end without a finish_reason on the last chunk: flush what was built.
      chat: { read: (_event, json) => this.chat(json), flushAtEnd: true },
      responses: { read: (event, json) => this.responses(event, json), flushAtEnd: false },
      messages: { read: (event, json) => this.messages(event, json), flushAtEnd: false },
    };
    this.reader = readers[protocol];
  }

  push(chunk: Uint8Array | string): ChatEvent[] {
    const events = this.read(this.sse.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk)));
    if (this.sse.tooLarge) throw new ChatStreamError(eventTooLargeMessage(), 'event-too-large');
    return events;
  }

  end(): ChatEvent[] {
    const out = this.read(this.sse.end());
    if (this.reader.flushAtEnd) out.push(...this.flushCalls());
    return out;
  }

  private read(messages: SseMessage[]): ChatEvent[] {
    const out: ChatEvent[] = [];
    for (const m of messages) {
      if (m.data === CHAT_DONE) {
        this.finished = true;
        out.push(...this.flushCalls());
        continue;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(m.data);
      } catch {
        continue; // keep-alive comments and the like
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) continue;
      const json = parsed as Record<string, unknown>;
      out.push(...this.reader.read(m.event, json));
    }
    return out;
  }

  private chat(json: Record<string, unknown>): ChatEvent[] {
    throwIfError(json);
    const out: ChatEvent[] = [];
    for (const choice of (json.choices as Array<Record<string, unknown>> | undefined) ?? []) {
      const delta = (choice.delta ?? {}) as Record<string, unknown>;
      if (typeof delta.content === 'string' && delta.content) out.push({ kind: 'text', text: delta.content });
      for (const tc of (delta.tool_calls as Array<Record<string, unknown>> | undefined) ?? []) {
        const index = typeof tc.index === 'number' ? tc.index : 0;
        const fn = (tc.function ?? {}) as Record<string, unknown>;
        let call = this.calls.get(index) ?? { id: '', name: '', args: '' };
        // Relays that send each whole call in its own chunk without an index: a new id is a new call.
        if (typeof tc.id === 'string' && tc.id && call.id && call.id !== tc.id) {
          out.push(toolCall(call.id, call.name, call.args));
          call = { id: '', name: '', args: '' };
        }
        if (typeof tc.id === 'string' && tc.id) call.id = tc.id;
        if (typeof fn.name === 'string' && fn.name) call.name = fn.name;
        if (typeof fn.arguments === 'string') call.args += fn.arguments;
        this.calls.set(index, call);
      }
      if (choice.finish_reason) {
        this.finished = true;
        out.push(...this.flushCalls());
      }
    }
    return out;
  }

  private responses(event: string | undefined, json: Record<string, unknown>): ChatEvent[] {
    const type = (json.type as string | undefined) ?? event;
    if (type === RESPONSES_EVENTS.textDelta && typeof json.delta === 'string')
      return json.delta ? [{ kind: 'text', text: json.delta }] : [];
    if (type === RESPONSES_EVENTS.itemDone) {
      const item = (json.item ?? {}) as Record<string, unknown>;
      if (item.type === 'function_call')
        return [toolCall(String(item.call_id ?? item.id ?? ''), String(item.name ?? ''), String(item.arguments ?? ''))];
      return [];
    }
    if (type === RESPONSES_EVENTS.completed || type === RESPONSES_EVENTS.incomplete) this.finished = true;
    if (type === RESPONSES_EVENTS.failed) {
      const error = ((json.response as Record<string, unknown> | undefined)?.error ?? {}) as Record<string, unknown>;
      throw new ChatStreamError(String(error.message ?? 'the response failed'), error.code as string | undefined);
    }
    if (type === 'error')
      throw new ChatStreamError(
        String(json.message ?? (json.error as Record<string, unknown> | undefined)?.message ?? 'error event'),
        json.code as string | undefined,
      );
    return [];
  }

  private messages(event: string | undefined, json: Record<string, unknown>): ChatEvent[] {
    const type = (json.type as string | undefined) ?? event;
    const index = typeof json.index === 'number' ? json.index : 0;
    if (type === MESSAGES_EVENTS.blockStart) {
      const block = (json.content_block ?? {}) as Record<string, unknown>;
      // Relays that put the whole input in the start block and send no input_json_delta keep it.
      const input =
        block.input && typeof block.input === 'object' && Object.keys(block.input).length
          ? JSON.stringify(block.input)
          : '';
      if (block.type === 'tool_use')
        this.calls.set(index, {
          id: String(block.id ?? ''),
          name: String(block.name ?? ''),
          args: input,
          fromStart: input !== '',
        });
      return [];
    }
    if (type === MESSAGES_EVENTS.blockDelta) {
      const delta = (json.delta ?? {}) as Record<string, unknown>;
      if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text)
        return [{ kind: 'text', text: delta.text }];
      if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
        const call = this.calls.get(index);
        if (call?.fromStart) {
          call.args = '';
          call.fromStart = false;
        }
        if (call) call.args += delta.partial_json;
      }
      return [];
    }
    if (type === MESSAGES_EVENTS.blockStop) {
      const call = this.calls.get(index);
      if (!call) return [];
      this.calls.delete(index);
      return [toolCall(call.id, call.name, call.args)];
    }
    if (type === MESSAGES_EVENTS.messageStop) this.finished = true;
    if (type === 'error') {
      const error = (json.error ?? {}) as Record<string, unknown>;
      throw new ChatStreamError(String(error.message ?? 'error event'), error.type as string | undefined);
    }
    return [];
  }

  private flushCalls(): ChatEvent[] {
    const out = [...this.calls.values()].filter((c) => c.name).map((c) => toolCall(c.id, c.name, c.args));
    this.calls.clear();
    return out;
  }
}

function throwIfError(json: Record<string, unknown>): void {
  const error = json.error as Record<string, unknown> | undefined;
  if (error && typeof error === 'object')
    throw new ChatStreamError(
      String(error.message ?? 'error in the stream'),
      (error.code ?? error.type) as string | undefined,
    );
}

/** Arguments that are not a JSON object (a cut stream) still make a call VS Code can show: `{}`. */
function toolCall(callId: string, name: string, args: string): ChatEvent {
  let input: object = {};
  try {
    const parsed: unknown = args ? JSON.parse(args) : {};
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) input = parsed;
  } catch {
    /* keep {} */
  }
  return { kind: 'toolCall', callId, name, input };
}
