// Loopgate's MCP server over streamable HTTP on the proxy (issue 43):
//   POST /_loopgate/mcp   one JSON-RPC message or batch; the answer as JSON (stateless: no Mcp-Session-Id, no stream)
// under the guards and credentials of the local API (the token, or a live run's credential for its own session:
// local-endpoints.ts checked it). The tools read the local API back through the one client with the caller's own
// credential, so the proxy scopes their answers exactly as it scopes that caller's reads. Read-only: replay and fault
// arming are `loopgate mcp`'s, and only when the user turns them on.
import type { IncomingMessage } from 'node:http';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { proxyOrigin } from '../../rules/addresses/urls.js';
import { LOCAL_ERROR_CODES, LOCAL_PATHS } from '../../core/local-api.js';
import { localApi } from '../../client/local-api-client.js';
import { presentedCredential } from './authenticate.js';
import type { ClientReply } from './client-reply.js';

/** A JSON-RPC message to this server is small: a body past this is refused. */
const MAX_MCP_BODY_BYTES = 1024 * 1024;
/** What a --no-token proxy is sent back instead of a credential: it accepts any. */
const NO_TOKEN_PLACEHOLDER = 'loopgate-no-token';
/** The request headers the MCP transport reads. */
const PASSED_HEADERS = ['content-type', 'accept', 'mcp-protocol-version'];

export async function handleMcp(req: IncomingMessage, reply: ClientReply): Promise<void> {
  if (req.method !== 'POST')
    throw new ProxyError(
      405,
      LOCAL_ERROR_CODES.methodNotAllowed,
      `${LOCAL_PATHS.mcp} takes POST (MCP's streamable HTTP, stateless: it opens no event stream and keeps no session).`,
      { allow: 'POST' },
    );
  const body = await readBody(req);
  const headers: Record<string, string> = {};
  for (const name of PASSED_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  // Back to this very listener, on the address the request came in on.
  const origin = proxyOrigin(
    (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/i, ''),
    req.socket.localPort ?? 0,
  );
  const target = { url: origin, token: presentedCredential(req) ?? NO_TOKEN_PLACEHOLDER };
  // Loaded on the first MCP call: a proxy that serves none never starts the MCP library.
  const { answerMcpPost } = await import('../../mcp/http-exchange.js');
  const answer = await answerMcpPost(origin + LOCAL_PATHS.mcp, headers, body, {
    api: localApi(target),
    target,
    actions: { replay: false, faults: false },
  });
  reply.answer(answer.status, answer.contentType, answer.body);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_MCP_BODY_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        reject(
          new ProxyError(413, LOCAL_ERROR_CODES.badBody, `An MCP message is at most ${MAX_MCP_BODY_BYTES} bytes.`),
        );
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
