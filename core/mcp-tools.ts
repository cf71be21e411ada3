// Loopgate's MCP server (issue 43), defined once for both ends: `loopgate mcp`
// (stdio) and the proxy's streamable HTTP endpoint (LOCAL_PATHS.mcp) serve the
// same tools, and `loopgate run --mcp` and the docs name them from here. Each
// tool answers in a few hundred tokens by default; `limit` or `detail` asks for
// more. Types and constants only (core/ imports nothing).

/** The server's name in an agent's MCP configuration (`mcp__loopgate__session` in Claude Code). */
export const MCP_SERVER_NAME = 'loopgate';

export const MCP_TOOLS = {
  session: 'session',
  requests: 'requests',
  request: 'request',
  errors: 'errors',
  search: 'search',
  usage: 'usage',
  faults: 'faults',
  /** Only when the user turns it on (`loopgate mcp --allow-replay`). */
  replay: 'replay',
  /** Only when the user turns it on (`loopgate mcp --allow-faults`). */
  armFault: 'arm_fault',
} as const;

export type McpToolName = (typeof MCP_TOOLS)[keyof typeof MCP_TOOLS];

/** A default answer is cut past this many characters (about 400 tokens); `detail` raises it to MCP_DETAIL_CHARS. */
export const MCP_ANSWER_CHARS = 1600;
export const MCP_DETAIL_CHARS = 24_000;
/** `limit` is a whole number from 1 to this. */
export const MCP_MAX_LIMIT = 200;

/** A tool's input as JSON Schema (what tools/list sends). */
export interface McpToolSchema {
  type: 'object';
  properties: Record<string, { type: 'string' | 'integer' | 'boolean'; description: string; enum?: string[] }>;
  required: string[];
  additionalProperties: false;
}

export interface McpToolSpec {
  name: McpToolName;
  description: string;
  inputSchema: McpToolSchema;
  /** Changes something (sends a request, arms a fault): listed only when the user turned it on. */
  action?: 'replay' | 'faults';
}

const session = { type: 'string', description: 'A session id (the `session` tool names it); default: yours.' } as const;
const limit = (n: number) =>
  ({ type: 'integer', description: `How many to list (default ${n}, at most ${MCP_MAX_LIMIT}).` }) as const;
const detail = { type: 'boolean', description: 'The long answer (default false: a short one).' } as const;
// `required` is always there, empty too: a schema without it reads (to some clients) as "every property".
const schema = (properties: McpToolSchema['properties'], required: string[] = []): McpToolSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

export const MCP_TOOL_SPECS: readonly McpToolSpec[] = [
  {
    name: MCP_TOOLS.session,
    description:
      'Your current session through Loopgate: turns, tokens, estimated cost, cache hit ratio, rate-limit headroom, errors.',
    inputSchema: schema({ session, detail }),
  },
  {
    name: MCP_TOOLS.requests,
    description: "The session's model calls, newest first: time, id, model, status, tokens, cost, cache outcome.",
    inputSchema: schema({ session, limit: limit(10) }),
  },
  {
    name: MCP_TOOLS.request,
    description:
      'One request by id (8 characters are enough): summary, diagnosis and fix, why its prompt cache missed, what fills its context. detail: the conversation too.',
    inputSchema: schema({ id: { type: 'string', description: 'The request id.' }, detail }, ['id']),
  },
  {
    name: MCP_TOOLS.errors,
    description: 'The last failed requests, each with its diagnosis and what to do about it.',
    inputSchema: schema({ session, limit: limit(3) }),
  },
  {
    name: MCP_TOOLS.search,
    description: 'Requests whose bodies hold a text (any case), newest first.',
    inputSchema: schema({ q: { type: 'string', description: 'The text to look for.' }, limit: limit(10) }, ['q']),
  },
  {
    name: MCP_TOOLS.usage,
    description: 'Requests, tokens, estimated cost and cache hit ratio per day, session, model or key.',
    inputSchema: schema({
      by: { type: 'string', description: 'How to group (default day).', enum: ['day', 'session', 'model', 'key'] },
      session,
    }),
  },
  {
    name: MCP_TOOLS.faults,
    description: 'The fault rules armed in the proxy, and what the client did after each injected fault.',
    inputSchema: schema({ limit: limit(5) }),
  },
  {
    name: MCP_TOOLS.replay,
    description: 'Sends one recorded request again through the proxy; says the new request id and status.',
    inputSchema: schema({ id: { type: 'string', description: 'The request id to send again.' } }, ['id']),
    action: 'replay',
  },
  {
    name: MCP_TOOLS.armFault,
    description: 'Arms a fault rule in the proxy (the --fault grammar, e.g. "429 times=1 retry-after=2").',
    inputSchema: schema(
      {
        rule: { type: 'string', description: 'The rule.' },
        times: { type: 'integer', description: 'How many requests it hits.' },
      },
      ['rule'],
    ),
    action: 'faults',
  },
];
