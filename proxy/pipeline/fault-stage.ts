// A mid-stream fault rule fired on this request (fault-inject.ts StreamFault):
// it counts the events the client gets (after any translation) and marks its
// point. What comes before the point goes on; what comes after is held for the
// relay, which strikes there (cut, error event, malformed event, stall) and
// then sends the rest or not. A stream that ends first is struck at its end.
import type { StreamFault } from './fault-inject.js';
import type { StreamStage, StageOutput } from './stream-stage.js';

export class FaultStage implements StreamStage {
  /** Set once the point is reached: the bytes after it, until the relay takes them. */
  #after?: Buffer[];

  constructor(readonly run: StreamFault) {}

  onChunk(buf: Buffer): StageOutput {
    if (this.#after) {
      this.#after.push(buf);
      return undefined;
    }
    if (this.run.fired) return buf;
    const at = this.run.point(buf);
    if (at === undefined) return buf;
    this.#after = [buf.subarray(at)];
    return at > 0 ? buf.subarray(0, at) : undefined;
  }

  onEnd(): StageOutput {
    // The stream ended before the fault's point: it strikes at the end, so it always happens.
    if (!this.run.fired) this.#after ??= [];
    return undefined;
  }

  /** The point was reached (by the chunks just pushed, or the end): what followed it, once. */
  takeStrike(): Buffer | undefined {
    const after = this.#after;
    if (!after || this.run.fired) return undefined;
    this.#after = undefined;
    return after.length === 1 ? after[0]! : Buffer.concat(after);
  }
}
