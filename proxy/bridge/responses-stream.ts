// Chat chunks → the Responses streaming event sequence.

import type { ChunkOp } from './chat-chunks.js';
import { functionCallItem, messageItem, responseIds, responseObject, responseStatus, responseUsage, type ResponseIds } from './responses-result.js';
import { sseEvent } from './sse.js';
import { ChatStreamTranslator } from './stream-base.js';
import { createdAt, idSuffix, type BridgeContext, type Json } from './types.js';

type Item =
  | { kind: 'message'; id: string; text: string }
  | { kind: 'call'; id: string; callId: string; name: string; args: string };

export class ResponsesStreamTranslator extends ChatStreamTranslator {
  private seq = 0;
  private readonly ids: ResponseIds;
  private readonly created: number;
  private readonly items: Item[] = [];
  private message: number | undefined; // output_index of the message item
  private readonly calls = new Map<number, number>(); // chat tool index → output_index

  constructor(private readonly ctx: BridgeContext) {
    super();
    this.ids = responseIds(ctx);
    this.created = createdAt(ctx);
  }

  private emit(type: string, payload: Json): string {
    return sseEvent(type, { type, sequence_number: this.seq++, ...payload });
  }

  protected toolId(index: number): string {
    return `call_${idSuffix(this.ctx.requestId)}_${index}`;
  }

  protected opening(): string {
    const response = responseObject(this.ctx, this.created, { status: 'in_progress', output: [], usage: null });
    return this.emit('response.created', { response }) + this.emit('response.in_progress', { response });
  }

  protected apply(op: Extract<ChunkOp, { op: 'text' | 'tool-start' | 'tool-args' }>): string {
    let out = '';
    if (op.op === 'text') {
      if (this.message === undefined) {
        this.message = this.items.length;
        this.items.push({ kind: 'message', id: this.ids.message, text: '' });
        const item = { ...messageItem(this.ids.message, '', 'in_progress'), content: [] };
        out += this.emit('response.output_item.added', { output_index: this.message, item });
        out += this.emit('response.content_part.added', {
          item_id: this.ids.message,
          output_index: this.message,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
        });
      }
      const item = this.items[this.message] as Extract<Item, { kind: 'message' }>;
      item.text += op.text;
      out += this.emit('response.output_text.delta', { item_id: item.id, output_index: this.message, content_index: 0, delta: op.text, logprobs: [] });
    } else if (op.op === 'tool-start') {
      const outputIndex = this.items.length;
      const id = this.ids.call(op.index);
      this.calls.set(op.index, outputIndex);
      this.items.push({ kind: 'call', id, callId: op.id, name: op.name, args: '' });
      out += this.emit('response.output_item.added', { output_index: outputIndex, item: functionCallItem(id, op.id, op.name, '', 'in_progress') });
    } else {
      const outputIndex = this.calls.get(op.index);
      if (outputIndex === undefined) return '';
      const item = this.items[outputIndex] as Extract<Item, { kind: 'call' }>;
      item.args += op.args;
      out += this.emit('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta: op.args });
    }
    return out;
  }

  protected closing(): string {
    const { status, incomplete_details } = responseStatus(this.finishReason);
    const itemStatus = status === 'completed' ? 'completed' : 'incomplete';
    let out = '';
    const output: Json[] = [];
    for (const [i, item] of this.items.entries()) {
      if (item.kind === 'message') {
        const part = { type: 'output_text', text: item.text, annotations: [], logprobs: [] };
        out += this.emit('response.output_text.done', { item_id: item.id, output_index: i, content_index: 0, text: item.text, logprobs: [] });
        out += this.emit('response.content_part.done', { item_id: item.id, output_index: i, content_index: 0, part });
        const done = messageItem(item.id, item.text, itemStatus);
        output.push(done);
        out += this.emit('response.output_item.done', { output_index: i, item: done });
      } else {
        out += this.emit('response.function_call_arguments.done', { item_id: item.id, output_index: i, name: item.name, arguments: item.args });
        const done = functionCallItem(item.id, item.callId, item.name, item.args, 'completed');
        output.push(done);
        out += this.emit('response.output_item.done', { output_index: i, item: done });
      }
    }
    const usage = responseUsage(this.usage ? { ...this.usage, cached: this.cached } : undefined);
    const response = responseObject(this.ctx, this.created, { status, output, usage, incomplete_details });
    return out + this.emit(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  protected failure(message: string, code: string): string {
    const output = this.items.map((item) =>
      item.kind === 'message' ? messageItem(item.id, item.text, 'incomplete') : functionCallItem(item.id, item.callId, item.name, item.args, 'incomplete'),
    );
    const response = responseObject(this.ctx, this.created, { status: 'failed', output, usage: null, error: { code, message } });
    return this.emit('error', { code, message, param: null }) + this.emit('response.failed', { response });
  }
}
