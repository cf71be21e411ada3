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
import {
  LOCAL_ERROR_CODES,
  LOCAL_PATHS,
  type SessionDetailAnswer,
  type SessionListAnswer,
  type SessionTurn,
} from '../../core/local-api.js';
import { isTurn } from '../traffic/session-book.js';
import type { SessionSummary } from '../../core/agent-session.js';
import { previousTurn } from '../traffic/previous-turn.js';
import { analyseTurn } from '../../analysis/turn-analysis.js';

const SESSIONS_PATH = LOCAL_PATHS.sessions;

export function isSessionEndpoint(path: string): boolean {
  return path === SESSIONS_PATH || path.startsWith(SESSIONS_PATH + '/');
}

export async function handleSessions(
  req: IncomingMessage,
  paths: PathFacts,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'ring' | 'sessions' | 'budgets'>,
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
    const listed = ctx.sessions.list(raw === null ? undefined : Number(raw));
    const answer: SessionListAnswer = { sessions: ctx.budgets.active ? listed.map((s) => withBudget(s, ctx)) : listed };
    return reply.answer(200, 'application/json', JSON.stringify(answer));
  }
  let id: string;
  try {
    id = decodeURIComponent(paths.path.slice(SESSIONS_PATH.length + 1));
  } catch {
    throw new ProxyError(400, LOCAL_ERROR_CODES.badQuery, 'The session id in the path is not valid percent-encoding.');
  }
  const found = ctx.sessions.get(id);
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
