// Who reads the ring and the sessions (issue 43): the local token sees every
// session; a live `loopgate run` credential sees only the sessions its own
// requests made, so an agent asking about "its session" (over MCP, or the local
// API) never reads another tool's prompts. Another session's request is
// answered as one the proxy does not hold.
import type { IncomingMessage } from 'node:http';
import { RUN_CREDENTIAL_PREFIX, verifyRunCredential } from '../../rules/access/run-credential.js';
import { checkToken, presentedCredential, type AuthContext } from './authenticate.js';
import type { ProxyContext } from './context.js';

export interface ReaderScope {
  /** True for the token; for a run credential, the sessions its requests made. */
  sees(sessionId: string | undefined): boolean;
}

const EVERYTHING: ReaderScope = { sees: () => true };

/** Checks the credential (the token, or a live run's) and says what its holder may read. */
export function readerScope(req: IncomingMessage, ctx: AuthContext & Pick<ProxyContext, 'sessions'>): ReaderScope {
  checkToken(req, ctx, 'own-session');
  const presented = presentedCredential(req);
  const run = presented?.startsWith(RUN_CREDENTIAL_PREFIX) ? verifyRunCredential(ctx.token, presented) : undefined;
  if (!run) return EVERYTHING;
  const own = ctx.sessions.sessionsOfRun(run);
  return { sees: (id) => id !== undefined && own.has(id) };
}
