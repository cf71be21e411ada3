// --budget-hard (issue 44): a stream under way is watched by the budget book;
// when a cap it counts is reached (another request of its session, run or key
// finishing), the relay ends it with the protocol's own error event naming
// the cap (rules/budgets/budget-stream-end.ts), at an event boundary
// (hard-cap-stage.ts). Without a hard cap nothing here runs.
import { randomBytes } from 'node:crypto';
import { protocolOfPath } from '../../rules/protocols/index.js';
import { budgetStreamEnd } from '../../rules/budgets/budget-stream-end.js';
import { capReached } from './budget-check.js';
import { HardCapStage } from './hard-cap-stage.js';
import type { ProxyContext } from './context.js';
import type { RequestSoFar } from './exchange.js';

export interface HardCap {
  stage: HardCapStage;
  /** The message of a reached hard cap of this stream, else undefined. */
  reached(): string | undefined;
  /** Asks `check` after each counted request; returns the unwatch. */
  watch(check: () => void): () => void;
  /** The protocol's error event(s) that end the stream. */
  event(message: string): string;
}

/** The stream's hard-cap watch, when a hard cap applies to it. */
export function hardCapFor(ex: RequestSoFar, ctx: Pick<ProxyContext, 'budgets' | 'cliCommand'>): HardCap | undefined {
  const book = ctx.budgets;
  if (!book.active) return undefined;
  const session = ex.session;
  const key = ex.key?.slot?.name;
  const protocol = protocolOfPath(ex.paths?.path ?? '');
  if (!protocol || !book.hasHardCap(session, key, new Date())) return undefined;
  const stage = new HardCapStage();
  return {
    stage,
    reached: () =>
      capReached(
        book.applying(session, key, new Date()).filter((a) => book.caps.hard || a.cap.hard),
        ctx,
      ),
    watch: (check) => book.watchStream(check),
    event: (message) => budgetStreamEnd(protocol, message, stage.events, `resp_${randomBytes(12).toString('hex')}`),
  };
}
