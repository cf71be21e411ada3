// A request's abort switch: an EventEmitter, a fraction of the cost of an
// AbortSignal (an EventTarget, built and listened to on every request). The
// upstream call (upstream-call.ts) and the wait for key lists listen to it; a
// real AbortSignal is made only when something needs one (the wait between
// retries).
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
