// Loopgate's MCP server (issue 43, part 1), one for both transports: `loopgate
// mcp` connects it to stdio, the proxy to a stateless streamable HTTP exchange
// (mcp/http-exchange.ts). The SDK's low-level Server with the tools' JSON
// Schemas from core/mcp-tools.ts; the tools themselves are tool-calls.ts's.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { version } from '../core/version.js';
import { MCP_SERVER_NAME } from '../core/mcp-tools.js';
import { callTool, toolsFor, type McpToolContext } from './tool-calls.js';

const INSTRUCTIONS =
  'Loopgate is the local proxy your model calls go through. Its tools answer about your own session: cost, tokens, ' +
  'cache, rate limits, errors with their fix, and each request. Answers are short by default: pass limit or detail for more.';

export function loopgateMcpServer(ctx: McpToolContext): Server {
  const server = new Server(
    { name: MCP_SERVER_NAME, version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: toolsFor(ctx.actions).map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { readOnlyHint: t.action === undefined },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const answer = await callTool(req.params.name, req.params.arguments, ctx);
    return { content: [{ type: 'text' as const, text: answer.text }], ...(answer.isError ? { isError: true } : {}) };
  });
  return server;
}
