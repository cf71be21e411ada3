// Groups of span attributes read off one record: an MCP call's, the usage's cache and reasoning parts, the
// session's and the cost's (genai-span.ts puts a span together from them). Pure.
import type { McpCall, SpanRecord } from '../../core/record.js';
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  ATTR_MCP_METHOD_NAME,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from '@opentelemetry/semantic-conventions/incubating';
import type { AttrValue } from './genai-facts.js';

/**
 * An MCP call as the GenAI conventions' tool execution (gen_ai.operation.name execute_tool): the tool's name (for
 * a call that is no tools/call, its JSON-RPC method and what it names), the MCP method, and the server.
 */
export function mcpAttributes(mcp: McpCall): Record<string, AttrValue> {
  const tool =
    mcp.rpcMethod === 'tools/call' && mcp.target ? mcp.target : [mcp.rpcMethod, mcp.target].filter(Boolean).join(' ');
  const out: Record<string, AttrValue> = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    [ATTR_GEN_AI_TOOL_NAME]: tool,
    [ATTR_GEN_AI_TOOL_TYPE]: 'extension',
    [ATTR_MCP_METHOD_NAME]: mcp.rpcMethod,
    'loopgate.mcp.server': mcp.server,
    'loopgate.mcp.transport': mcp.transport,
  };
  if (mcp.resultTokens !== undefined) out['loopgate.mcp.result_tokens'] = mcp.resultTokens;
  if (mcp.error) out['loopgate.mcp.error'] = mcp.error.message;
  return out;
}

/**
 * The cache and reasoning parts of the usage, by the conventions' names (each part of
 * gen_ai.usage.input_tokens or output_tokens, as they ask): what a collector's cache hit ratio reads.
 */
export function cacheTokenAttributes(rec: SpanRecord): Record<string, AttrValue> {
  const t = rec.tokens;
  if (!t) return {};
  const out: Record<string, AttrValue> = {
    [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: t.cacheRead,
    [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: t.cacheWrite5m + t.cacheWrite1h,
  };
  if (t.reasoning) out[ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] = t.reasoning;
  return out;
}

/** The agent session as the conventions' conversation id, and how Loopgate tied the request to it. */
export function sessionAttributes(rec: SpanRecord): Record<string, AttrValue> {
  const s = rec.session;
  if (!s) return {};
  const out: Record<string, AttrValue> = {
    [ATTR_GEN_AI_CONVERSATION_ID]: s.id,
    'loopgate.session.source': s.source,
    'loopgate.session.client': s.client,
  };
  if (s.agent) out['loopgate.session.agent'] = s.agent;
  if (s.run) out['loopgate.session.run.tool'] = s.run.tool;
  return out;
}

/**
 * The estimated cost. The GenAI conventions name no cost attribute yet (gen_ai.usage.cost.* is a
 * proposal: semantic-conventions-genai PR 443), so it is Loopgate's own, in USD, and says it is an estimate.
 */
export function costAttributes(rec: SpanRecord): Record<string, AttrValue> {
  const c = rec.cost;
  if (!c) return {};
  if ('noPrice' in c) return { 'loopgate.cost.no_price': true };
  return {
    'loopgate.cost.estimated_usd': c.estimated,
    'loopgate.cost.priced_as': c.pricedAs,
    'loopgate.cost.price_source': c.source,
  };
}
