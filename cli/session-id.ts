// A session id as the user typed it (whole, the client's own part of it, or a
// unique start of either) → the session the proxy holds; otherwise a message
// that names the known ones, so `tail --session` never waits silently on an id
// that will never come.
import type { LocalApiClient } from '../client/local-api-client.js';
import type { SessionSummary } from '../core/agent-session.js';

/** Known sessions named in an error, at most this many (most recent first). */
const LISTED = 10;

export type SessionLookup = { ok: true; id: string } | { ok: false; problem: string };

function pickSession(sessions: readonly SessionSummary[], wanted: string): SessionLookup {
  const exact = sessions.find((s) => s.id === wanted);
  if (exact) return { ok: true, id: exact.id };
  // Ids are `<client>:<the id the client sent>`: the client's own id works too.
  const own = (id: string) => id.slice(id.indexOf(':') + 1);
  const named = sessions.filter((s) => own(s.id) === wanted);
  if (named.length === 1) return { ok: true, id: named[0]!.id };
  const starts =
    named.length > 1
      ? named
      : wanted.length >= 4
        ? sessions.filter((s) => s.id.startsWith(wanted) || own(s.id).startsWith(wanted))
        : [];
  if (starts.length === 1) return { ok: true, id: starts[0]!.id };
  const shown = (starts.length > 1 ? starts : sessions).slice(0, LISTED);
  const list = shown.map((s) => `  ${s.id}  ${s.client}, ${s.turns} turns, last ${s.lastSeen}`).join('\n');
  const more = (starts.length > 1 ? starts : sessions).length - shown.length;
  if (starts.length > 1)
    return {
      ok: false,
      problem: `"${wanted}" starts ${starts.length} sessions' ids; give more of it:\n${list}${more > 0 ? `\n  … and ${more} more` : ''}`,
    };
  if (sessions.length === 0)
    return {
      ok: false,
      problem: `no session "${wanted}": the proxy holds no sessions yet (send a request through it).`,
    };
  return {
    ok: false,
    problem: `no session "${wanted}" in the proxy's memory. Known sessions, most recent first (\`loopgate sessions\` for more):\n${list}${more > 0 ? `\n  … and ${more} more` : ''}`,
  };
}

export async function sessionNamed(api: LocalApiClient, wanted: string): Promise<SessionLookup> {
  const { sessions } = await api.sessions();
  return pickSession(sessions, wanted);
}
