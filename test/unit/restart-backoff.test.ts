// The extension's crash-restart backoff on a fake clock: no test waits for a real timer.
import { describe, expect, it } from 'vitest';
import { BACKOFF_MS, RestartBackoff, type BackoffClock } from '../../extension/proxy-host/restart-backoff.js';

function fakeClock() {
  let now = 0;
  const timers = new Map<number, { at: number; run: () => void }>();
  let next = 1;
  const clock: BackoffClock = {
    now: () => now,
    setTimeout: (run, ms) => {
      timers.set(next, { at: now + ms, run });
      return next++;
    },
    clearTimeout: (h) => timers.delete(h as number),
  };
  const advance = (ms: number) => {
    now += ms;
    for (const [id, t] of [...timers]) {
      if (t.at > now) continue;
      timers.delete(id);
      t.run();
    }
  };
  return { clock, advance, pending: () => timers.size };
}

describe('RestartBackoff', () => {
  it('grows the delay with each crash, then gives up', () => {
    const b = new RestartBackoff(fakeClock().clock);
    expect(BACKOFF_MS.map(() => b.nextDelay())).toEqual([...BACKOFF_MS]);
    expect(b.nextDelay()).toBeUndefined();
    expect(b.crashes).toBe(BACKOFF_MS.length);
  });

  it('a child that ran for over a minute starts the count afresh; a short run does not', () => {
    const f = fakeClock();
    const b = new RestartBackoff(f.clock);
    b.nextDelay();
    b.nextDelay();
    b.resetIfStable(f.clock.now());
    expect(b.crashes).toBe(2);
    const started = f.clock.now();
    f.advance(60_001);
    b.resetIfStable(started);
    expect(b.crashes).toBe(0);
  });

  it('restarts after the delay, and not at all once cancelled', () => {
    const f = fakeClock();
    const b = new RestartBackoff(f.clock);
    let restarts = 0;
    b.schedule(500, () => restarts++);
    f.advance(499);
    expect(restarts).toBe(0);
    f.advance(1);
    expect(restarts).toBe(1);
    b.schedule(1000, () => restarts++);
    b.cancel();
    f.advance(5000);
    expect(restarts).toBe(1);
    expect(f.pending()).toBe(0);
  });
});
