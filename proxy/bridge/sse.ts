// Incremental SSE reading (upstream chat chunks) and writing (caller events).

export interface SseMessage {
  event?: string;
  data: string;
}

/**
 * Splits a byte stream into SSE messages. Bytes are decoded with a streaming
 * decoder so a multi-byte character split across chunks survives.
 */
export class SseReader {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private event: string | undefined;
  private data: string[] = [];

  push(chunk: Buffer | string): SseMessage[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    return this.drain(false);
  }

  /** Flush what is left at end of stream (a last message without its blank line). */
  end(): SseMessage[] {
    this.buffer += this.decoder.decode();
    return this.drain(true);
  }

  private drain(final: boolean): SseMessage[] {
    const out: SseMessage[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more.
      if (m[0] === '\r' && m.index === this.buffer.length - 1 && !final) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      this.line(line, out);
    }
    if (final) {
      if (this.buffer.length > 0) this.line(this.buffer, out);
      this.buffer = '';
      this.line('', out);
    }
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event, data: this.data.join('\n') });
      this.event = undefined;
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

export function sseEvent(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
