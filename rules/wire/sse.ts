// Incremental SSE reading (upstream chat chunks) and writing (caller events).

export interface SseMessage {
  event?: string;
  data: string;
}

/**
 * The most text one event (its data lines, or one line still being received)
 * may hold: 16 Mi characters. A real chat chunk is a few hundred bytes and the
 * largest legitimate ones (a whole tool call's arguments, a base64 image in one
 * delta) stay well below a few MiB; without a cap an upstream could make the
 * proxy hold one endless line in memory. Past it the stream is refused with an
 * error event in the caller's protocol and the upstream is dropped.
 */
const MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * Splits a byte stream into SSE messages. Bytes are decoded with a streaming
 * decoder so a multi-byte character split across chunks survives.
 *
 * Linear in the bytes received: each chunk is scanned once, and the unfinished
 * line is kept as a list of pieces joined only when its end arrives. (Re-scanning
 * one growing buffer for every chunk made a 12 MiB single line cost 12–25 s of
 * CPU, stalling every other client of the proxy: issue 23 F-D.)
 */
export class SseReader {
  private readonly decoder = new TextDecoder('utf-8');
  private pieces: string[] = []; // the unfinished line
  private piecesChars = 0;
  private afterCr = false; // the last line ended with \r: a \n that opens the next chunk belongs to it
  private event: string | undefined;
  private data: string[] = [];
  private dataChars = 0;
  /** Set once an event passed the cap; the reader then ignores everything. */
  tooLarge = false;

  constructor(private readonly maxEventChars = MAX_SSE_EVENT_CHARS) {}

  push(chunk: Buffer | string): SseMessage[] {
    return this.scan(typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }), false);
  }

  /** Flush what is left at end of stream (a last message without its blank line). */
  end(): SseMessage[] {
    return this.scan(this.decoder.decode(), true);
  }

  private scan(text: string, final: boolean): SseMessage[] {
    const out: SseMessage[] = [];
    if (this.tooLarge) return out;
    let start = 0;
    if (this.afterCr && text.length > 0) {
      if (text.charCodeAt(0) === 10) start = 1;
      this.afterCr = false;
    }
    let lf = text.indexOf('\n', start);
    let cr = text.indexOf('\r', start);
    while (lf !== -1 || cr !== -1) {
      const at = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      this.line(this.takeLine(text, start, at), out);
      if (this.tooLarge) return out;
      start = at + 1;
      if (at === cr) {
        if (start < text.length) {
          if (text.charCodeAt(start) === 10) start++;
        } else this.afterCr = true;
      }
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
    }
    if (start < text.length) {
      const rest = start === 0 ? text : text.slice(start);
      this.pieces.push(rest);
      this.piecesChars += rest.length;
      if (this.dataChars + this.piecesChars > this.maxEventChars) {
        this.overflow();
        return out;
      }
    }
    if (final) {
      if (this.piecesChars > 0) this.line(this.takeLine('', 0, 0), out);
      this.line('', out);
    }
    return out;
  }

  private takeLine(text: string, from: number, to: number): string {
    const tail = text.slice(from, to);
    if (this.pieces.length === 0) return tail;
    this.pieces.push(tail);
    const line = this.pieces.join('');
    this.pieces = [];
    this.piecesChars = 0;
    return line;
  }

  private overflow(): void {
    this.tooLarge = true;
    this.pieces = [];
    this.piecesChars = 0;
    this.data = [];
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event, data: this.data.join('\n') });
      this.event = undefined;
      this.data = [];
      this.dataChars = 0;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.dataChars += value.length + 1;
      if (this.dataChars > this.maxEventChars) this.overflow();
    } else if (field === 'event') this.event = value;
  }
}

/** What the caller is told when an upstream event passes MAX_SSE_EVENT_CHARS. */
export function eventTooLargeMessage(maxChars = MAX_SSE_EVENT_CHARS): string {
  return `The upstream sent one stream event larger than ${Math.round(maxChars / (1024 * 1024))} MiB; Loopgate stopped reading it (a chat chunk is normally a few hundred bytes).`;
}

export function sseEvent(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
