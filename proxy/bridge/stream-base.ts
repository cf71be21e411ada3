// What both stream translators share: SSE framing in, chunk operations out,
// one terminal event at most.

import { chunkOps, type ChunkOp, type ToolSeen } from './chat-chunks.js';
import { CHAT_DONE } from '../../rules/protocols/chat-completions.js';
import { eventTooLargeMessage, SseReader } from '../../rules/wire/sse.js';
import type { StreamTranslator } from './types.js';

export abstract class ChatStreamTranslator implements StreamTranslator {
  private readonly reader = new SseReader();
  private readonly tools = new Map<number, ToolSeen>();
  protected finishReason: string | undefined;
  protected matchedStop: string | undefined;
  protected cached: number | undefined;
  protected reasoningTokens: number | undefined;
  private terminal = false;
  private started = false;
  usage?: { input?: number; output?: number };

  get sawTerminal(): boolean {
    return this.terminal;
  }

  get refusedUpstream(): boolean {
    return this.reader.tooLarge;
  }

  push(chunk: Buffer | string): string {
    if (this.terminal) return '';
    return this.consume(this.reader.push(chunk)) + this.refuseTooLarge();
  }

  end(): string {
    if (this.terminal) return '';
    const out = this.consume(this.reader.end()) + this.refuseTooLarge();
    if (this.terminal) return out;
    // A finish_reason without [DONE] is a finished answer; neither means the upstream stopped short.
    if (this.finishReason !== undefined) return out + this.complete();
    return out + this.fail('The upstream chat stream ended before the answer was finished.');
  }

  fail(message: string, code = 'bridge_upstream_failed'): string {
    if (this.terminal) return '';
    const out = this.begin() + this.failure(message, code);
    this.terminal = true;
    return out;
  }

  private refuseTooLarge(): string {
    return this.reader.tooLarge ? this.fail(eventTooLargeMessage(), 'bridge_event_too_large') : '';
  }

  private consume(messages: { event?: string; data: string }[]): string {
    let out = '';
    for (const m of messages) {
      if (this.terminal) break;
      out += this.begin();
      if (m.data.trim() === CHAT_DONE) {
        out += this.complete();
        continue;
      }
      const ops: ChunkOp[] =
        m.event === 'error'
          ? [{ op: 'error', message: errorMessage(m.data), code: 'upstream_error' }]
          : chunkOps(m.data, this.tools, (i) => this.toolId(i));
      for (const op of ops) {
        if (op.op === 'error') {
          out += this.fail(op.message, op.code);
          break;
        }
        if (op.op === 'finish') {
          this.finishReason = op.reason;
          this.matchedStop = op.matchedStop;
        } else if (op.op === 'usage') {
          this.usage = { input: op.input, output: op.output };
          this.cached = op.cached;
          this.reasoningTokens = op.reasoning;
        } else out += this.apply(op);
      }
    }
    return out;
  }

  private begin(): string {
    if (this.started) return '';
    this.started = true;
    return this.opening();
  }

  private complete(): string {
    const out = this.begin() + this.closing();
    this.terminal = true;
    return out;
  }

  protected abstract toolId(index: number): string;
  protected abstract opening(): string;
  protected abstract apply(op: Extract<ChunkOp, { op: 'text' | 'reasoning' | 'tool-start' | 'tool-args' }>): string;
  protected abstract closing(): string;
  protected abstract failure(message: string, code: string): string;
}

function errorMessage(data: string): string {
  try {
    const j = JSON.parse(data) as { error?: { message?: unknown }; message?: unknown };
    const m = j.error?.message ?? j.message;
    if (typeof m === 'string' && m) return m;
  } catch {
    // fall through
  }
  return 'The upstream chat route reported an error mid-stream.';
}
