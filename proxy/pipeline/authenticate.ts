// The client proves it is a local tool with the local token; the real key is
// added later, only on the upstream request.
import type { IncomingMessage } from 'node:http';
import { secretEquals } from '../rules/constant-time.js';
import { ProxyError } from '../rules/proxy-errors.js';
import { looksLikeProviderKey } from '../rules/secret-patterns.js';
import { shortKey } from '../rules/key-display.js';
import { commandLine, INSTALLED_COMMAND } from '../rules/command-line.js';
import { verifyRunCredential } from '../rules/run-credential.js';

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

/**
 * `cli`: how this install's user types the CLI (ProxyOptions.cliCommand), for the command the message names;
 * `proxyFlags`: ` --port N` when the proxy is not on the default port, so `env` points tools at this one.
 */
export function checkToken(req: IncomingMessage, token: string | null, cli = INSTALLED_COMMAND, proxyFlags = ''): void {
  if (token === null) return;
  const presented = presentedCredential(req);
  if (presented !== undefined && secretEquals(token, presented)) return;
  // `loopgate run`'s per-run credential, derived from the token (rules/run-credential.ts).
  if (verifyRunCredential(token, presented)) return;
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
