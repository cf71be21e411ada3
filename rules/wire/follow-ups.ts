// Pairs the tool calls of an answer with their results, which arrive in a later
// request (the agent runs the tool, then sends the result back): the Traffic
// view and `loopgate show` put each call next to what it returned.
import { reassemble, toolCalls, toolResults } from './conversation.js';
import type { FollowUp, TrafficEntry } from '../../core/traffic-entry.js';

/** How many later requests are searched for a result. */
const LOOKAHEAD = 50;

export function conversationOf(e: TrafficEntry) {
  return reassemble({
    path: e.record.canonicalPath,
    bridge: e.record.bridge,
    requestBody: e.requestBody,
    responseBody: e.responseBody,
    stream: e.record.stream,
    status: e.record.status,
  });
}

/** For each tool call in `entry`'s answer, the result a later request sent back (if the ring still holds it). */
export function followUps(entry: TrafficEntry, later: TrafficEntry[]): Record<string, FollowUp> {
  const calls = toolCalls(conversationOf(entry).output ?? []);
  const found: Record<string, FollowUp> = {};
  if (calls.size === 0) return found;
  for (const next of later.slice(0, LOOKAHEAD)) {
    const body = next.requestBody;
    if (!body) continue;
    const pending = [...calls.keys()].filter((id) => !found[id] && body.includes(id));
    if (pending.length === 0) continue;
    const input = conversationOf(next).input;
    const results = toolResults(input);
    // The same conversation: the later request repeats the call in its history (ids like `call_0` recur across conversations).
    const echoed = toolCalls(input);
    for (const id of pending) {
      const result = results.get(id);
      if (result && echoed.has(id)) found[id] = { seq: next.seq, id: next.record.id, result };
    }
    if (Object.keys(found).length === calls.size) break;
  }
  return found;
}
