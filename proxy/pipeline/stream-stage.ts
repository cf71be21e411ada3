// One step of a streamed answer's per-chunk work, over bytes (issue 40): a
// stage takes a chunk and gives on nothing, one chunk or several, in order;
// at the stream's end it gives what it still holds. Stages never turn bytes
// into text: a chunk no stage changes reaches the client as the very Buffer
// the upstream gave. compose-stages.ts picks a request's stages once, from
// its facts; the relays (relay.ts for HTTP, ws-relay.ts for WebSocket turns)
// run every chunk through them into the one sink, the reply.

/** What a stage gives on: nothing, one chunk, or several in order. */
export type StageOutput = Buffer | readonly Buffer[] | undefined;

export interface StreamStage {
  onChunk(buf: Buffer): StageOutput;
  /** The stream ended: what the stage still holds (a translation's closing events, a held tail). */
  onEnd(): StageOutput;
}

/** A request's stages in order: a chunk in, the client's chunks out. */
export class StageChain {
  constructor(private readonly stages: readonly StreamStage[]) {}

  /** `buf` through every stage: what reaches the end, in order (often `[buf]` itself). */
  push(buf: Buffer): Buffer[] {
    const out: Buffer[] = [];
    this.feed(0, buf, out);
    return out;
  }

  /** Ends each stage in turn; what one gives at its end passes through the stages after it. */
  end(): Buffer[] {
    const out: Buffer[] = [];
    for (let i = 0; i < this.stages.length; i++) this.emit(i + 1, this.stages[i]!.onEnd(), out);
    return out;
  }

  private feed(i: number, buf: Buffer, out: Buffer[]): void {
    if (i === this.stages.length) out.push(buf);
    else this.emit(i + 1, this.stages[i]!.onChunk(buf), out);
  }

  private emit(i: number, given: StageOutput, out: Buffer[]): void {
    if (given === undefined) return;
    if (Buffer.isBuffer(given)) return this.feed(i, given, out);
    for (const buf of given) this.feed(i, buf, out);
  }
}
