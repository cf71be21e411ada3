// One MCP exchange over streamable HTTP, stateless (issue 43): a fresh server
// and transport per POST, JSON answers (no event stream), and no session id, so
// nothing is keyed on Mcp-Session-Id (the 2026-07-28 spec retires it). The
// proxy hands over the body it read and writes back what this returns.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { loopgateMcpServer } from './loopgate-server.js';
import type { McpToolContext } from './tool-calls.js';

export interface McpHttpAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** Answers one POST to the MCP endpoint; `url` only names the request (nothing is fetched from it). */
export async function answerMcpPost(
  url: string,
  headers: Record<string, string>,
  body: string,
  ctx: McpToolContext,
): Promise<McpHttpAnswer> {
  const server = loopgateMcpServer(ctx);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  try {
    await server.connect(transport);
    const res = await transport.handleRequest(new Request(url, { method: 'POST', headers, body }));
    return {
      status: res.status,
      contentType: res.headers.get('content-type') ?? 'application/json',
      body: await res.text(),
    };
  } finally {
    await transport.close();
    await server.close();
  }
}
