// Where a streamed answer's time goes, chunk by chunk: the wait for the next
// chunk is the upstream's, the work on it (the stages, the write) Loopgate's;
// time the client's full socket held the stream is neither (reply.timing).
import type { ClientReply } from './client-reply.js';

export class ChunkTiming {
  /** Since when Loopgate has been ready for the next chunk (undefined while the client's socket is full). */
  #ready: number | undefined = performance.now();
  #arrived = 0;

  constructor(private readonly reply: Pick<ClientReply, 'addBodyTime'>) {}

  /** A chunk came. */
  arrived(): void {
    this.#arrived = performance.now();
  }

  /** Loopgate is done with it; `full`: the client's socket took no more (the wait until drain is nobody's). */
  done(full: boolean): void {
    const now = performance.now();
    const arrived = this.#arrived;
    this.reply.addBodyTime(now - arrived, this.#ready === undefined ? 0 : arrived - this.#ready);
    this.#ready = full ? undefined : now;
  }

  /** The client's socket drained: ready again. */
  drained(): void {
    this.#ready ??= performance.now();
  }
}
