// --budget-hard (issue 44): the last stage of a streamed answer under a cap.
// It follows the event boundaries of what the client gets, so that when the
// budget book says the cap was reached (by another request of the same
// session, run or key finishing) the stream ends between two events, never
// inside one: at once when the client's last event is whole, else at the end
// of the event being written. The relay then sends the protocol's error event.
import type { StageOutput, StreamStage } from './stream-stage.js';

export class HardCapStage implements StreamStage {
  /** Events the client has had (Responses numbers its error event after them). */
  events = 0;
  #lastNewline = false;
  #atBoundary = true;
  /** The cap was reached: the refusal's message, until the stream ends. */
  #reached?: string;
  /** The point is reached: the relay ends the stream now. */
  #due = false;

  /** The cap was reached; true when the stream can end at once (its last event is whole). */
  reach(message: string): boolean {
    this.#reached ??= message;
    if (this.#atBoundary) this.#due = true;
    return this.#due;
  }

  onChunk(buf: Buffer): StageOutput {
    if (this.#due) return undefined;
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i];
      if (c === 10) {
        if (this.#lastNewline) {
          this.#lastNewline = false;
          this.#atBoundary = true;
          this.events++;
          if (this.#reached !== undefined) {
            this.#due = true;
            return buf.subarray(0, i + 1);
          }
        } else this.#lastNewline = true;
      } else if (c !== 13) {
        this.#lastNewline = false;
        this.#atBoundary = false;
      }
    }
    return buf;
  }

  onEnd(): StageOutput {
    return undefined;
  }

  /** The message to end with, once the stream is at its point (taken once). */
  takeEnd(): string | undefined {
    if (!this.#due || this.#reached === undefined) return undefined;
    const message = this.#reached;
    this.#reached = undefined;
    return message;
  }
}
