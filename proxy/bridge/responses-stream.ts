// Chat chunks → the Responses streaming event sequence.

import { toolNamesOf, type CallerTool, type ToolNames } from './tool-names.js';
import type { ChunkOp } from './chat-chunks.js';
import {
  customInput,
  customToolCallItem,
  functionCallItem,
  messageItem,
  reasoningItem,
  responseIds,
  responseObject,
  responseStatus,
  responseUsage,
  type ResponseIds,
} from './responses-result.js';
import { outputTextPart, RESPONSES_EVENTS } from '../../rules/protocols/responses.js';
import { sseEvent } from '../../rules/wire/sse.js';
import { ChatStreamTranslator } from './stream-base.js';
import { createdAt, idSuffix, type BridgeContext, type Json } from './types.js';

type Item =
  | { kind: 'reasoning'; id: string; text: string; done: boolean }
  | { kind: 'message'; id: string; text: string }
  | { kind: 'call'; id: string; callId: string; tool: CallerTool; args: string; custom: boolean };

export class ResponsesStreamTranslator extends ChatStreamTranslator {
  private seq = 0;
  private readonly ids: ResponseIds;
  private readonly created: number;
  private readonly items: Item[] = [];
  private message: number | undefined; // output_index of the message item
  private reasoning: number | undefined; // output_index of the open reasoning item
  private readonly calls = new Map<number, number>(); // chat tool index → output_index
  private readonly toolNames: ToolNames;

  constructor(private readonly ctx: BridgeContext) {
    super();
    this.ids = responseIds(ctx);
    this.created = createdAt(ctx);
    this.toolNames = toolNamesOf(ctx.request);
  }

  private emit(type: string, payload: Json): string {
    return sseEvent(type, { type, sequence_number: this.seq++, ...payload });
  }

  protected toolId(index: number): string {
    return `call_${idSuffix(this.ctx.requestId)}_${index}`;
  }

  protected opening(): string {
    const response = responseObject(this.ctx, this.created, { status: 'in_progress', output: [], usage: null });
    return this.emit(RESPONSES_EVENTS.created, { response }) + this.emit(RESPONSES_EVENTS.inProgress, { response });
  }

  protected apply(op: Extract<ChunkOp, { op: 'text' | 'reasoning' | 'tool-start' | 'tool-args' }>): string {
    if (op.op === 'reasoning') return this.think(op.text);
    // Reasoning comes first; the answer closes it, as the Responses API orders items.
    let out = this.closeReasoning();
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
          part: outputTextPart(''),
        });
      }
      const item = this.items[this.message] as Extract<Item, { kind: 'message' }>;
      item.text += op.text;
      out += this.emit(RESPONSES_EVENTS.textDelta, {
        item_id: item.id,
        output_index: this.message,
        content_index: 0,
        delta: op.text,
        logprobs: [],
      });
    } else if (op.op === 'tool-start') {
      const outputIndex = this.items.length;
      const id = this.ids.call(op.index);
      this.calls.set(op.index, outputIndex);
      const tool = this.toolNames.callerTool(op.name);
      const custom = tool.custom;
      this.items.push({ kind: 'call', id, callId: op.id, tool, args: '', custom });
      const item = custom
        ? customToolCallItem(id, op.id, tool, '', 'in_progress')
        : functionCallItem(id, op.id, tool, '', 'in_progress');
      out += this.emit('response.output_item.added', { output_index: outputIndex, item });
    } else {
      const outputIndex = this.calls.get(op.index);
      if (outputIndex === undefined) return '';
      const item = this.items[outputIndex] as Extract<Item, { kind: 'call' }>;
      item.args += op.args;
      // A custom tool's input is inside the JSON arguments: it is sent whole once they are complete.
      if (!item.custom)
        out += this.emit('response.function_call_arguments.delta', {
          item_id: item.id,
          output_index: outputIndex,
          delta: op.args,
        });
    }
    return out;
  }

  private think(text: string): string {
    let out = '';
    if (this.reasoning === undefined) {
      this.reasoning = this.items.length;
      const n = this.items.filter((i) => i.kind === 'reasoning').length;
      const id = n === 0 ? this.ids.reasoning : `${this.ids.reasoning}_${n}`;
      this.items.push({ kind: 'reasoning', id, text: '', done: false });
      out += this.emit('response.output_item.added', {
        output_index: this.reasoning,
        item: { type: 'reasoning', id, summary: [], content: [], status: 'in_progress' },
      });
      out += this.emit('response.content_part.added', {
        item_id: id,
        output_index: this.reasoning,
        content_index: 0,
        part: { type: 'reasoning_text', text: '' },
      });
    }
    const item = this.items[this.reasoning] as Extract<Item, { kind: 'reasoning' }>;
    item.text += text;
    return (
      out +
      this.emit('response.reasoning_text.delta', {
        item_id: item.id,
        output_index: this.reasoning,
        content_index: 0,
        delta: text,
      })
    );
  }

  private closeReasoning(status = 'completed'): string {
    if (this.reasoning === undefined) return '';
    const i = this.reasoning;
    const item = this.items[i] as Extract<Item, { kind: 'reasoning' }>;
    this.reasoning = undefined;
    item.done = true;
    return (
      this.emit('response.reasoning_text.done', {
        item_id: item.id,
        output_index: i,
        content_index: 0,
        text: item.text,
      }) +
      this.emit('response.content_part.done', {
        item_id: item.id,
        output_index: i,
        content_index: 0,
        part: { type: 'reasoning_text', text: item.text },
      }) +
      this.emit('response.output_item.done', { output_index: i, item: reasoningItem(item.id, item.text, status) })
    );
  }

  protected closing(): string {
    const { status, incomplete_details } = responseStatus(this.finishReason);
    const itemStatus = status === 'completed' ? 'completed' : 'incomplete';
    let out = this.closeReasoning();
    const output: Json[] = [];
    for (const [i, item] of this.items.entries()) {
      if (item.kind === 'reasoning') {
        output.push(reasoningItem(item.id, item.text, 'completed'));
      } else if (item.kind === 'message') {
        const part = outputTextPart(item.text);
        out += this.emit(RESPONSES_EVENTS.textDone, {
          item_id: item.id,
          output_index: i,
          content_index: 0,
          text: item.text,
          logprobs: [],
        });
        out += this.emit('response.content_part.done', { item_id: item.id, output_index: i, content_index: 0, part });
        const done = messageItem(item.id, item.text, itemStatus);
        output.push(done);
        out += this.emit('response.output_item.done', { output_index: i, item: done });
      } else if (item.custom) {
        const input = customInput(item.args);
        if (input)
          out += this.emit('response.custom_tool_call_input.delta', {
            item_id: item.id,
            output_index: i,
            delta: input,
          });
        out += this.emit('response.custom_tool_call_input.done', { item_id: item.id, output_index: i, input });
        const done = customToolCallItem(item.id, item.callId, item.tool, input, itemStatus);
        output.push(done);
        out += this.emit('response.output_item.done', { output_index: i, item: done });
      } else {
        out += this.emit('response.function_call_arguments.done', {
          item_id: item.id,
          output_index: i,
          name: item.tool.name,
          arguments: item.args,
        });
        // Arguments cut off by the token limit must not look runnable.
        const done = functionCallItem(item.id, item.callId, item.tool, item.args, itemStatus);
        output.push(done);
        out += this.emit('response.output_item.done', { output_index: i, item: done });
      }
    }
    const usage = responseUsage(
      this.usage ? { ...this.usage, cached: this.cached, reasoning: this.reasoningTokens } : undefined,
    );
    const response = responseObject(this.ctx, this.created, { status, output, usage, incomplete_details });
    return (
      out + this.emit(status === 'completed' ? RESPONSES_EVENTS.completed : RESPONSES_EVENTS.incomplete, { response })
    );
  }

  protected failure(message: string, code: string): string {
    const output = this.items.map((item) =>
      item.kind === 'reasoning'
        ? reasoningItem(item.id, item.text, item.done ? 'completed' : 'incomplete')
        : item.kind === 'message'
          ? messageItem(item.id, item.text, 'incomplete')
          : item.custom
            ? customToolCallItem(item.id, item.callId, item.tool, customInput(item.args), 'incomplete')
            : functionCallItem(item.id, item.callId, item.tool, item.args, 'incomplete'),
    );
    const response = responseObject(this.ctx, this.created, {
      status: 'failed',
      output,
      usage: null,
      error: { code, message },
    });
    return this.emit('error', { code, message, param: null }) + this.emit(RESPONSES_EVENTS.failed, { response });
  }
}
