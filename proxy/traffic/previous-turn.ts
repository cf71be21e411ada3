// The turn a request's cache is compared with: the session's latest earlier
// request to the same model from the same agent, still in the ring. The model
// and the agent matter: Claude Code's side requests (a title, a Task agent)
// share the session id but not the cache, which is per model and per prompt.
import type { TrafficEntry } from '../core/traffic-entry.js';
import { bridgedFrom, endpointProtocol } from '../rules/protocols/index.js';
import type { TrafficRing } from './ring.js';

function isTurn(e: TrafficEntry): boolean {
  return (bridgedFrom(e.record.bridge) ?? endpointProtocol(e.record.canonicalPath)) !== undefined;
}

export function previousTurn(ring: TrafficRing, entry: TrafficEntry): TrafficEntry | undefined {
  const session = entry.record.session;
  if (!session || !isTurn(entry)) return undefined;
  for (const e of ring.list()) {
    if (e.seq >= entry.seq) continue;
    const s = e.record.session;
    if (s?.id === session.id && s.agent === session.agent && e.record.model === entry.record.model && isTurn(e))
      return e;
  }
  return undefined;
}
