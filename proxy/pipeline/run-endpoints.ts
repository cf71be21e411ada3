// `loopgate run` tells the proxy when its run starts and ends (issue 39 H-4), under the local token:
//   POST   /_loopgate/runs   x-loopgate-run: <the run's credential>   the run lives: its credential is good
//   DELETE /_loopgate/runs   x-loopgate-run: <the run's credential>   the run ended: its credential is refused
// Only a credential this proxy's token made is taken (its MAC is checked).
import type { IncomingMessage } from 'node:http';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { verifyRunCredential } from '../../rules/access/run-credential.js';
import type { ProxyContext } from './context.js';
import type { ClientReply } from './client-reply.js';
import { LOCAL_ERROR_CODES, LOCAL_PATHS, RUN_HEADER, type RunAnswer } from '../../core/local-api.js';

export async function handleRuns(
  req: IncomingMessage,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'runs' | 'token'>,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'POST' && method !== 'DELETE')
    throw new ProxyError(
      405,
      LOCAL_ERROR_CODES.methodNotAllowed,
      `${LOCAL_PATHS.runs} takes POST (a run started) or DELETE (it ended).`,
      { allow: 'POST, DELETE' },
    );
  const credential = req.headers[RUN_HEADER];
  const facts = typeof credential === 'string' ? verifyRunCredential(ctx.token, credential) : undefined;
  if (!facts || typeof credential !== 'string')
    throw new ProxyError(
      400,
      LOCAL_ERROR_CODES.badRunCredential,
      `${RUN_HEADER} must hold a run credential this proxy's local token made (the one \`loopgate run\` gives its tool).`,
    );
  const state = method === 'POST' ? 'live' : 'ended';
  ctx.runs.mark(facts, credential, state);
  reply.answer(
    200,
    'application/json',
    JSON.stringify({ state: ctx.runs.state(facts) === 'ended' ? 'ended' : 'live' } satisfies RunAnswer),
  );
}
