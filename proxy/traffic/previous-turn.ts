// The turn a request's cache is compared with: the session's latest earlier
// request to the same model from the same agent, still in the ring (the
// SessionBook knows the session's requests). The model and the agent matter:
// Claude Code's side requests (a title, a Task agent) share the session id but
// not the cache, which is per model and per prompt.
import type { TrafficEntry } from '../../core/traffic-entry.js';
import { bridgedFrom, endpointProtocol } from '../../rules/protocols/index.js';
import type { TrafficRing } from './ring.js';
import type { SessionBook } from './session-book.js';

/** How many earlier requests of the session are looked at (side requests in between are skipped). */
const LOOKBACK = 50;

function isConversation(e: TrafficEntry): boolean {
  return (bridgedFrom(e.record.bridge) ?? endpointProtocol(e.record.canonicalPath)) !== undefined;
}

export function previousTurn(
  ring: TrafficRing,
  sessions: Pick<SessionBook, 'previousSeq'>,
  entry: TrafficEntry,
): TrafficEntry | undefined {
  const session = entry.record.session;
  if (!session || !isConversation(entry)) return undefined;
  let seq: number | undefined = entry.seq;
  for (let i = 0; i < LOOKBACK; i++) {
    seq = sessions.previousSeq(session.id, seq);
    if (seq === undefined) return undefined;
    const e = ring.get(String(seq));
    if (e?.seq !== seq) return undefined; // evicted (a digit-only id prefix could name another entry)
    const s = e.record.session;
    if (s?.agent === session.agent && e.record.model === entry.record.model && isConversation(e)) return e;
  }
  return undefined;
}
