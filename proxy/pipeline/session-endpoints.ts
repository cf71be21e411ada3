// The sessions over HTTP (issue 33), under the local token like every /_loopgate/ endpoint:
//   GET /_loopgate/sessions        most recently active first: { sessions: SessionSummary[] } (?limit=N), no seqs
//   GET /_loopgate/sessions/<id>   one session, its ring seqs and each of its turns still in the ring, oldest first
// The per-turn cache outcome and context breakdown are added by the forensics (computed on this read, never
// on the request's path).
import type { IncomingMessage } from 'node:http';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import type { ProxyContext } from './context.js';
import type { PathFacts } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import type { ReaderScope } from './reader-scope.js';
import {
  LOCAL_ERROR_CODES,
  LOCAL_PATHS,
  type SessionDetailAnswer,
  type SessionListAnswer,
  type SessionTurn,
} from '../../core/local-api.js';
import type { SessionSummary } from '../../core/agent-session.js';
import { isTurn } from '../traffic/session-book.js';
import { previousTurn } from '../traffic/previous-turn.js';
import { analyseTurn } from '../../analysis/turn-analysis.js';

const SESSIONS_PATH = LOCAL_PATHS.sessions;

export function isSessionEndpoint(path: string): boolean {
  return path === SESSIONS_PATH || path.startsWith(SESSIONS_PATH + '/');
}

/**
 * A session's `retries` as `loopgate faults` counts them: the proxy's own retries of the upstream (in each record)
 * plus the client's retries of the faults injected into the session (the fault report's chains), so a session
 * whose client retried an injected 429 twice says 2, as `loopgate faults` does ("retried twice").
 */
function withClientRetries(sessions: SessionSummary[], ctx: Pick<ProxyContext, 'faultLedger'>): SessionSummary[] {
  const verdicts = ctx.faultLedger?.report() ?? [];
  if (!verdicts.length) return sessions;
  // A retry that was itself faulted opens a chain of its own whose attempts are the first chain's too: each
  // retry is counted once, by its request id (past the attempts a verdict lists, by its count).
  const bySession = new Map<string, { ids: Set<string>; unlisted: number }>();
  for (const v of verdicts) {
    if (!v.session || v.retries === 0) continue;
    const tally = bySession.get(v.session) ?? { ids: new Set<string>(), unlisted: 0 };
    for (const a of v.attempts) tally.ids.add(a.id);
    tally.unlisted += v.retries - v.attempts.length;
    bySession.set(v.session, tally);
  }
  return sessions.map((s) => {
    const tally = bySession.get(s.id);
    return tally ? { ...s, retries: s.retries + tally.ids.size + tally.unlisted } : s;
  });
}

/** One session as the proxy holds it, its retries counted as above; undefined when it holds none by that id. */
export function sessionWithRetries(
  ctx: Pick<ProxyContext, 'sessions' | 'faultLedger'>,
  id: string,
): SessionSummary | undefined {
  const found = ctx.sessions.get(id);
  return found && withClientRetries([found], ctx)[0];
}

export async function handleSessions(
  req: IncomingMessage,
  paths: PathFacts,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'ring' | 'sessions' | 'faultLedger' | 'budgets'>,
  scope?: ReaderScope,
): Promise<void> {
  if (req.method !== 'GET')
    throw new ProxyError(405, LOCAL_ERROR_CODES.methodNotAllowed, `${SESSIONS_PATH} is read with GET.`, {
      allow: 'GET',
    });
  if (paths.path === SESSIONS_PATH) {
    const query = new URLSearchParams(paths.query.replace(/^\?/, ''));
    const raw = query.get('limit');
    if (raw !== null && !/^\d{1,6}$/.test(raw))
      throw new ProxyError(400, LOCAL_ERROR_CODES.badQuery, 'limit must be a whole number.');
    const limit = raw === null ? undefined : Number(raw);
    // A run's credential: its own sessions, from the whole list (they need not be the most recent).
    const sessions = scope
      ? ctx.sessions
          .list()
          .filter((s) => scope.sees(s.id))
          .slice(0, limit)
      : ctx.sessions.list(limit);
    const counted = withClientRetries(sessions, ctx);
    const answer: SessionListAnswer = {
      sessions: ctx.budgets.active ? counted.map((s) => withBudget(s, ctx)) : counted,
    };
    return reply.answer(200, 'application/json', JSON.stringify(answer));
  }
  let id: string;
  try {
    id = decodeURIComponent(paths.path.slice(SESSIONS_PATH.length + 1));
  } catch {
    throw new ProxyError(400, LOCAL_ERROR_CODES.badQuery, 'The session id in the path is not valid percent-encoding.');
  }
  const found = !scope || scope.sees(id) ? sessionWithRetries(ctx, id) : undefined;
  const session = found && ctx.budgets.active ? withBudget(found, ctx) : found;
  if (!session)
    throw new ProxyError(
      404,
      LOCAL_ERROR_CODES.unknownSession,
      `No session ${JSON.stringify(id.slice(0, 80))} in this proxy's memory: it keeps the sessions seen since it started (\`loopgate sessions\` lists them; \`loopgate usage\` reads older ones from the log).`,
    );
  const turns: SessionTurn[] = [];
  const ring = ctx.ring;
  const seqs = ctx.sessions.seqs(id) ?? [];
  for (const seq of seqs) {
    const entry = ring?.get(String(seq));
    if (!ring || !entry || !isTurn(entry.record)) continue;
    const r = entry.record;
    const turn: SessionTurn = { seq, id: r.id, time: r.time, status: r.status };
    if (r.model) turn.model = r.servedModel ?? r.model;
    if (r.session?.agent) turn.agent = r.session.agent;
    if (r.tokens) turn.tokens = r.tokens;
    if (r.cost) turn.cost = r.cost;
    // Each turn against the one before it (memoised per entry: a panel that polls pays once).
    const { cache, context } = await analyseTurn(entry, previousTurn(ring, ctx.sessions, entry));
    if (cache) turn.cache = cache;
    if (context) turn.context = context;
    turns.push(turn);
  }
  const answer: SessionDetailAnswer = { session, seqs, turns };
  reply.answer(200, 'application/json', JSON.stringify(answer));
}

/** The session's cap and spend, when a session cap is set (`loopgate sessions` shows spend/cap, the panel draws it). */
function withBudget(s: SessionSummary, ctx: Pick<ProxyContext, 'budgets'>): SessionSummary {
  const budget = ctx.budgets.sessionLine(s.id);
  return budget ? { ...s, budget } : s;
}
