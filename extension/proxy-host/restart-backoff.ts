// The crash counter and restart timer for our child: growing delays between
// restarts, a fresh count after a stable run, and giving up after the last delay.

/** Restart delays after consecutive crashes; then we give up and say so. */
export const BACKOFF_MS = [500, 1_000, 2_000, 4_000, 8_000, 16_000];
/** A child that lived this long resets the crash counter. */
const STABLE_MS = 60_000;

/** The time the backoff runs on; tests can pass a fake one. */
export interface BackoffClock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemClock: BackoffClock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => setTimeout(run, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};

export class RestartBackoff {
  private count = 0;
  private timer: unknown;

  constructor(
    private readonly clock: BackoffClock = systemClock,
    private readonly delays: readonly number[] = BACKOFF_MS,
  ) {}

  /** Consecutive crashes counted so far. */
  get crashes(): number {
    return this.count;
  }

  now(): number {
    return this.clock.now();
  }

  /** A user's start forgets earlier crashes. */
  reset(): void {
    this.count = 0;
  }

  /** A child started at `startedAt` (this clock's now()) crashed: after a stable run, counting starts afresh. */
  resetIfStable(startedAt: number): void {
    if (this.clock.now() - startedAt > STABLE_MS) this.count = 0;
  }

  /** Counts one more crash and returns the delay before its restart; undefined once the delays are used up. */
  nextDelay(): number | undefined {
    const delay = this.delays[this.count];
    if (delay === undefined) return undefined;
    this.count++;
    return delay;
  }

  /** Runs `restart` after `delayMs`, unless cancel() comes first. */
  schedule(delayMs: number, restart: () => void): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      restart();
    }, delayMs);
  }

  cancel(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
