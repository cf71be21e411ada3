// Per-key requests-per-minute over a sliding 60 s window.
import { SimError } from './relay-errors.js';
import type { FixtureKey } from './fixture.js';

const WINDOW_MS = 60_000;

export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  /** Counts one request for the key, or throws 429 with the seconds until a slot frees up. */
  take(key: FixtureKey, now = Date.now()): void {
    if (key.rpm === undefined) return;
    const times = (this.hits.get(key.key) ?? []).filter((t) => t > now - WINDOW_MS);
    if (times.length >= key.rpm) {
      const retryAfter = Math.max(1, Math.ceil((times[0]! + WINDOW_MS - now) / 1000));
      this.hits.set(key.key, times);
      throw new SimError('rate_limit_exceeded', `Rate limit reached: this key allows ${key.rpm} requests per minute. Retry after ${retryAfter} s`, null, retryAfter);
    }
    times.push(now);
    this.hits.set(key.key, times);
  }
}
