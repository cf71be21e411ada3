// Chat chunks → the Anthropic Messages streaming event sequence.

import type { ChunkOp } from './chat-chunks.js';
import { messageId, messageUsage, stopReason } from './messages-result.js';
import { MESSAGES_EVENTS } from '../../rules/protocols/anthropic-messages.js';
import { sseEvent } from '../../rules/wire/sse.js';
import { messagesToolNamesOf, type ToolNames } from './tool-names.js';
import { ChatStreamTranslator } from './stream-base.js';
import { idSuffix, type BridgeContext, type Json } from './types.js';

export class MessagesStreamTranslator extends ChatStreamTranslator {
  private next = 0; // next content block index
  private open: { index: number; kind: 'text' | 'tool' } | undefined;
  private readonly toolBlocks = new Map<number, number>(); // chat tool index → block index
  // Parallel tool calls whose arguments may interleave with the open one's: held
  // whole until the open block closes, since a stopped block takes no more deltas.
  private queued: { index: number; id: string; name: string; args: string }[] = [];

  private readonly names: ToolNames;

  constructor(private readonly ctx: BridgeContext) {
    super();
    this.names = messagesToolNamesOf(ctx.request);
  }

  private emit(type: string, payload: Json): string {
    return sseEvent(type, { type, ...payload });
  }

  protected toolId(index: number): string {
    return `toolu_${idSuffix(this.ctx.requestId)}_${index}`;
  }

  protected opening(): string {
    const message = {
      id: messageId(this.ctx),
      type: 'message',
      role: 'assistant',
      model: this.ctx.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // Chat reports usage only at the end; message_delta carries the real counts.
      usage: messageUsage(undefined),
    };
    return this.emit(MESSAGES_EVENTS.messageStart, { message });
  }

  /** Anthropic streams one block at a time: close the open one before starting another. */
  private closeOpen(): string {
    if (!this.open) return '';
    const out = this.emit('content_block_stop', { index: this.open.index });
    this.open = undefined;
    return out;
  }

  protected apply(op: Extract<ChunkOp, { op: 'text' | 'reasoning' | 'tool-start' | 'tool-args' }>): string {
    // Claude returns thinking blocks only when asked, and the bridge refuses `thinking`
    // (a thinking block needs a signature a chat route cannot produce): reasoning is not shown.
    if (op.op === 'reasoning') return '';
    let out = '';
    if (op.op === 'text') {
      if (this.open?.kind !== 'text') {
        out += this.closeOpen() + this.flushQueued();
        this.open = { index: this.next++, kind: 'text' };
        out += this.emit('content_block_start', { index: this.open.index, content_block: { type: 'text', text: '' } });
      }
      out += this.emit('content_block_delta', { index: this.open.index, delta: { type: 'text_delta', text: op.text } });
    } else if (op.op === 'tool-start') {
      if (this.open?.kind === 'tool') {
        this.queued.push({ index: op.index, id: op.id, name: op.name, args: '' });
        return '';
      }
      out += this.closeOpen();
      this.open = { index: this.next++, kind: 'tool' };
      this.toolBlocks.set(op.index, this.open.index);
      out += this.emit('content_block_start', {
        index: this.open.index,
        content_block: { type: 'tool_use', id: op.id, name: this.names.callerTool(op.name).name, input: {} },
      });
    } else {
      const held = this.queued.find((q) => q.index === op.index);
      if (held) {
        held.args += op.args;
        return '';
      }
      const index = this.toolBlocks.get(op.index);
      // Only the open block takes deltas; arguments for a closed one cannot be sent any more.
      if (index === undefined || this.open?.index !== index) return '';
      out += this.emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: op.args } });
    }
    return out;
  }

  /** The held tool calls, each as one complete block. */
  private flushQueued(): string {
    let out = '';
    for (const q of this.queued) {
      const index = this.next++;
      this.toolBlocks.set(q.index, index);
      out += this.emit('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: q.id, name: this.names.callerTool(q.name).name, input: {} },
      });
      if (q.args)
        out += this.emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: q.args } });
      out += this.emit('content_block_stop', { index });
    }
    this.queued = [];
    return out;
  }

  protected closing(): string {
    const usage = messageUsage(this.usage ? { ...this.usage, cached: this.cached } : undefined);
    return (
      this.closeOpen() +
      this.flushQueued() +
      this.emit('message_delta', {
        delta: stopReason(this.finishReason, this.matchedStop, this.toolBlocks.size > 0),
        usage,
      }) +
      this.emit(MESSAGES_EVENTS.messageStop, {})
    );
  }

  protected failure(message: string, _code: string): string {
    return this.emit('error', { error: { type: 'api_error', message } });
  }
}
