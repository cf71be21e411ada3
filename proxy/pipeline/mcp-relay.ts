// An HTTP MCP server the user mounted on the proxy (`serve --mcp NAME=URL`):
// `/mcp/NAME[/rest]` is forwarded to URL[/rest] as streamable HTTP (a POST's
// JSON or SSE answer, a GET's SSE stream, a DELETE), unbuffered like the model
// routes, with Loopgate's credential taken off and nothing added. Nothing is
// keyed on Mcp-Session-Id: it passes through as any header. Only here is an MCP
// body read: the POST's JSON-RPC message and, bounded, the answer that carries
// its response, so the record can name the call (rules/wire/mcp-messages.ts).
import { request } from 'undici';
import type { ProxyContext } from './context.js';
import type { BodyFacts, RequestSoFar } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import type { McpCall } from '../../core/record.js';
import { upstreamRequestHeaders } from './headers.js';
import { readBody } from './read-body.js';
import { ProxyError, upstreamFailure } from '../../rules/diagnosis/proxy-errors.js';
import {
  answerMessages,
  estimatedTokens,
  MAX_MCP_MESSAGE_CHARS,
  readMcpMessage,
  type McpRequestFacts,
} from '../../rules/wire/mcp-messages.js';

export const MCP_PATH_PREFIX = '/mcp/';

/** The mounted server a path names, and the rest of the path after its name. */
function mcpMount(
  path: string,
  servers: ReadonlyMap<string, URL>,
): { name: string; url: URL; rest: string } | undefined {
  if (!path.startsWith(MCP_PATH_PREFIX)) return undefined;
  const tail = path.slice(MCP_PATH_PREFIX.length);
  const cut = tail.indexOf('/');
  const name = cut < 0 ? tail : tail.slice(0, cut);
  const url = servers.get(name);
  return url && { name, url, rest: cut < 0 ? '' : tail.slice(cut) };
}

function notMounted(path: string, servers: ReadonlyMap<string, URL>): ProxyError {
  const names = [...servers.keys()].map((n) => `${MCP_PATH_PREFIX}${n}`).join(', ');
  return new ProxyError(
    404,
    'mcp-server-not-mounted',
    `${path} names no MCP server of this proxy (${names || 'none is mounted'}); mount one with \`serve --mcp NAME=URL\`.`,
  );
}

/** What the relay learned, for the sequencer to keep in the request's facts. */
export interface McpRelayStep {
  body?: BodyFacts;
  mcp?: McpCall;
}

/**
 * Forwards one streamable-HTTP exchange. The body read and the call it carried (a POST of a JSON-RPC request) go to
 * `took` before the answer is sent, so the record (build-record.ts) has them; the call's result is added as it passes.
 */
export async function relayMcp(
  facts: RequestSoFar,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'mcpServers' | 'limits' | 'otlp' | 'redactor'>,
  where: { path: string; query: string },
  took: (step: McpRelayStep) => void,
): Promise<void> {
  const { path, query } = where;
  const mount = mcpMount(path, ctx.mcpServers);
  if (!mount) throw notMounted(path, ctx.mcpServers);
  const method = facts.req.method ?? 'GET';
  let call: McpRequestFacts | undefined;
  let body: Buffer | undefined;
  if (method === 'POST') {
    const read = await readBody(facts, reply, ctx, true);
    took({ body: read });
    body = read.body;
    if (body && body.length <= MAX_MCP_MESSAGE_CHARS) {
      const read = readMcpMessage(body.toString('utf8'));
      if (read.kind === 'request') call = read.request;
    }
  }
  const target = new URL(mount.url);
  target.pathname = target.pathname.replace(/\/$/, '') + mount.rest || '/';
  if (query) target.search = query;
  const mcp: McpCall | undefined = call && {
    server: mount.name,
    transport: 'http',
    rpcMethod: call.method,
    ...(call.target !== undefined ? { target: call.target } : {}),
  };
  if (mcp) took({ mcp });
  let answer;
  try {
    answer = await request(target, {
      method: method as 'GET',
      headers: upstreamRequestHeaders(facts.req.rawHeaders, undefined, false, body?.length),
      body,
      // A GET's event stream stays open as long as the server keeps it: no body timeout.
      bodyTimeout: 0,
    });
  } catch (err) {
    throw upstreamFailure(err);
  }
  const type = String(answer.headers['content-type'] ?? '');
  const eventStream = type.startsWith('text/event-stream');
  reply.head(answer.statusCode, answer.headers, { stream: eventStream });
  // The answer's text, held only while it could carry the call's response (bounded).
  let held: Buffer[] | undefined = call?.id !== undefined ? [] : undefined;
  let heldBytes = 0;
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    if (held) {
      heldBytes += chunk.length;
      if (heldBytes > MAX_MCP_MESSAGE_CHARS) held = undefined;
      else held.push(chunk);
    }
    if (!reply.send(chunk))
      await new Promise<void>((resolve) => {
        const off = reply.onDrain(() => {
          off();
          resolve();
        });
      });
    if (reply.clientGone) {
      answer.body.destroy();
      break;
    }
  }
  if (mcp && held) noteResponse(mcp, Buffer.concat(held).toString('utf8'), eventStream, call!.id!);
  reply.end();
}

/** The response to the call, found in the answer: its error, or the size of its result. */
function noteResponse(mcp: McpCall, text: string, eventStream: boolean, id: string): void {
  for (const message of answerMessages(text, eventStream)) {
    const read = readMcpMessage(message);
    if (read.kind !== 'response' || read.response.id !== id) continue;
    if (read.response.error) mcp.error = read.response.error;
    mcp.resultChars = read.response.resultChars;
    mcp.resultTokens = estimatedTokens(read.response.resultChars);
    return;
  }
}
