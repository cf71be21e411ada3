// The client proves it is a local tool with the local token; the real key is
// added later, only on the upstream request.
import type { IncomingMessage } from 'node:http';
import { secretEquals } from '../../rules/access/constant-time.js';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { looksLikeProviderKey } from '../../rules/redaction/secret-patterns.js';
import { shortKey } from '../../rules/redaction/key-display.js';
import { commandLine, INSTALLED_COMMAND } from '../../rules/project/command-line.js';
import { RUN_CREDENTIAL_PREFIX, runLifetime, verifyRunCredential } from '../../rules/access/run-credential.js';
import { LOCAL_API_PREFIX, LOCAL_ERROR_CODES } from '../../core/local-api.js';
import type { RunBook } from '../traffic/run-book.js';

/** The credential a client presented: Bearer, x-api-key or api-key. */
export function presentedCredential(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (auth) {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    return m ? m[1]!.trim() : auth.trim();
  }
  const apiKey = req.headers['x-api-key'] ?? req.headers['api-key'];
  return Array.isArray(apiKey) ? apiKey[0] : apiKey;
}

/** What a credential is checked against; `cliCommand` and `cliProxyFlags` name the command that fixes a refusal. */
export interface AuthContext {
  token: string | null;
  runs: RunBook;
  cliCommand?: string;
  cliProxyFlags?: string;
}

/**
 * The model API (/v1/*, its WebSocket) takes the token or a live run's credential; Loopgate's own API the token only,
 * but for its reads of sessions (`own-session`: the ring, the sessions, the faults report, MCP), which a live run's
 * credential may make for its own sessions (issue 43; reader-scope.ts filters the answers).
 */
export type AuthScope = 'model-api' | 'loopgate-api' | 'own-session';

export function checkToken(req: IncomingMessage, ctx: AuthContext, scope: AuthScope): void {
  const { token } = ctx;
  const presented = presentedCredential(req);
  // `loopgate run`'s per-run credential, derived from the token (rules/access/run-credential.ts): model calls and own reads.
  const run = presented?.startsWith(RUN_CREDENTIAL_PREFIX) ? verifyRunCredential(token, presented) : undefined;
  if (run) ctx.runs.seen(presented!);
  if (run && scope === 'loopgate-api')
    throw new ProxyError(
      403,
      LOCAL_ERROR_CODES.runCredentialScope,
      `This is a \`loopgate run\` credential: it is for the tool's model calls (/v1/...) and reading its own session (GET ${LOCAL_API_PREFIX}sessions, traffic, faults; ${LOCAL_API_PREFIX}mcp) only. The rest of Loopgate's own API (${LOCAL_API_PREFIX}...) takes the local token.`,
    );
  if (token === null) return;
  if (presented !== undefined && secretEquals(token, presented)) return;
  if (run) {
    const life = runLifetime(run, ctx.runs.state(run), Date.now());
    if (life.ok) return;
    throw new ProxyError(401, life.code, life.reason);
  }
  const cli = ctx.cliCommand ?? INSTALLED_COMMAND;
  const proxyFlags = ctx.cliProxyFlags ?? '';
  const where =
    `Set your tool's API key to the local token: run \`${commandLine(cli, 'token')}\` (or \`eval "$(${commandLine(cli, `env${proxyFlags}`)})"\`), ` +
    'e.g. OPENAI_API_KEY for OpenAI clients or ANTHROPIC_AUTH_TOKEN for Anthropic clients. In VS Code, integrated terminals get it automatically.';
  if (presented === undefined) {
    throw new ProxyError(401, 'missing-local-token', `No local token was sent. ${where}`);
  }
  // `Authorization: Bearer ` with nothing after it: a `$(loopgate token)` that printed nothing in that shell.
  if (presented === '' || /^bearer$/i.test(presented)) {
    throw new ProxyError(
      401,
      'missing-local-token',
      `The credential header was sent empty (did the command that prints the token fail in that shell?). ${where}`,
    );
  }
  if (looksLikeProviderKey(presented)) {
    throw new ProxyError(
      401,
      'provider-key-sent',
      `This looks like a real provider key (${shortKey(presented)}), not the Loopgate local token. Loopgate holds the real key; ` +
        `remove it from your tool and use the local token instead. ${where}`,
    );
  }
  throw new ProxyError(401, 'wrong-local-token', `The local token is wrong. ${where}`);
}
