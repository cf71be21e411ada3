// A first-tier agent suite: the real agents' recorded requests (agent-tape.ts) sent again through real proxies
// in front of the cassettes they were answered from (replay-stack.ts), each case's proxy-side facts asserted as
// its live twin (`*.live.test.ts`, `npm run test:live`) asserts them on the real binaries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCompleteCleanLogs, type ProxySide } from './agent-suite.js';
import { startReplayStack, type ReplayStack } from './replay-stack.js';

interface Case<N extends string> {
  title: string;
  facts(stack: ProxySide<N>, before: number): Promise<void>;
}

export function replaySuite<N extends string>(
  suite: string,
  proxies: readonly N[],
  cases: Record<string, Case<N>>,
  /** A last check of the suite's own, after every case (no secret in the session answers, say). */
  closing?: (stack: ProxySide<N>) => Promise<void>,
): void {
  let stack: ReplayStack<N>;
  beforeAll(async () => {
    stack = await startReplayStack(suite, proxies);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  describe(`${suite}: the real agents' recorded requests, replayed through the proxy`, () => {
    it('the tape holds every case replayed, recorded from the pinned versions', () => {
      expect(Object.keys(stack.tape.cases)).toEqual(expect.arrayContaining(Object.keys(cases)));
      expect(Object.values(stack.tape.versions).every((v) => /^\d+\.\d+\.\d+/.test(v))).toBe(true);
    });

    for (const [name, c] of Object.entries(cases))
      it(
        c.title,
        async () => {
          const before = stack.traffic.length;
          await stack.play(name);
          await c.facts(stack, before);
        },
        // A case's facts wait on the proxy's analysis (sessions) with deadlines of their own, up to 30 s under load.
        60_000,
      );

    it('every request is in the traffic logs, and no token is in any log or console line', async () => {
      await expectCompleteCleanLogs(stack, []);
      await closing?.(stack);
    });
  });
}
