// A request's abort switch. undici takes an EventEmitter as its `signal` as
// well as an AbortSignal, and the emitter costs a fraction of one: an
// AbortSignal is an EventTarget, built and listened to (twice, by undici) on
// every request. A real AbortSignal is made only when something needs one
// (the wait between retries).
import { EventEmitter } from 'node:events';

export class RequestAbort extends EventEmitter {
  aborted = false;
  reason: unknown;
  private controller?: AbortController;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.emit('abort');
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }
}
