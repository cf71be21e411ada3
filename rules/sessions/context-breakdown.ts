// What fills a request's context (issue 33 §4): the system prompt, the tool
// definitions by MCP server, the conversation history, the tool results in it,
// and the new turn, in tokens. The split is counted with a BPE tokenizer the
// caller hands in (analysis/tokenizers.ts loads gpt-tokenizer's encodings on
// first use); the total is the upstream's exact prompt count when the usage
// reported one. For a model whose vocabulary we do not have (Claude, Gemini,
// ...) the shares are counted with o200k and scaled to that exact total: an
// estimate, and the answer says so. Pure, no I/O.
import type { ContextBreakdown, ContextPart } from '../../core/agent-session.js';
import type { Protocol } from '../../core/routing-facts.js';
import { PROTOCOL_TABLE } from '../protocols/index.js';
import { obj, stringify } from '../protocols/conversation-parts.js';
import { stringifyWithin } from '../json/nesting.js';
import type { Message, Part } from '../protocols/spec.js';

/** The encodings gpt-tokenizer ships that Loopgate loads. */
export type EncodingName = 'o200k_base' | 'cl100k_base';

export interface TokenCounter {
  encoding: EncodingName;
  count(text: string): number;
}

/**
 * Which encoding counts a model's tokens, and whether that is the model's own:
 * o200k for GPT-4o, 4.1, 4.5, 5 and the o-series; cl100k for GPT-3.5 and GPT-4
 * (not 4o); anything else is counted with o200k as an estimate.
 */
export function encodingFor(model: string | undefined): { encoding: EncodingName; own: boolean } {
  // Relays prefix vendors ("openai/gpt-4o"); dated snapshots keep the family's prefix.
  const m = (model ?? '').toLowerCase().replace(/^.*\//, '');
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.[15]|gpt-5|gpt-oss|o[134](-|$)|codex-)/.test(m))
    return { encoding: 'o200k_base', own: true };
  if (/^gpt-(3\.5|4)(-|$)/.test(m)) return { encoding: 'cl100k_base', own: true };
  return { encoding: 'o200k_base', own: false };
}

/** An MCP tool's server (Claude Code's `mcp__server__tool` names), else undefined. */
function mcpServer(toolName: string): string | undefined {
  const m = /^mcp__(.+?)__./.exec(toolName);
  return m?.[1];
}

/** A tool definition's name in any protocol: Messages' and Responses' `name`, Chat's `function.name`, a hosted tool's `type`. */
function toolName(tool: unknown): string {
  const t = obj(tool) ?? {};
  const name = t.name ?? obj(t.function)?.name ?? t.type;
  return typeof name === 'string' ? name : 'unknown';
}

/** The text a conversation part puts in front of the model (images and files count nothing here). */
function partText(p: Part): string {
  switch (p.type) {
    case 'tool_call':
      return `${stringify(p.name)}${stringify(p.arguments)}`;
    case 'tool_call_response':
      return stringify(p.response);
    default:
      return typeof p.content === 'string' ? p.content : '';
  }
}

const SYSTEM_ROLES = new Set(['system', 'developer']);

interface Counted {
  system: number;
  tools: Map<string, { tokens: number; count: number }>;
  history: number;
  toolResults: number;
  /** Tool results of MCP tools (Claude Code's `mcp__server__tool` calls), by server, wherever they sit. */
  mcpResults: Map<string, number>;
  newTurn: number;
}

function countParts(protocol: Protocol, body: Record<string, unknown>, counter: TokenCounter): Counted {
  const conv = PROTOCOL_TABLE[protocol].conversation.request(body);
  const sum = (parts: readonly Part[]) => parts.reduce((n, p) => n + counter.count(partText(p)), 0);
  const out: Counted = {
    system: sum(conv.system ?? []),
    tools: new Map(),
    history: 0,
    toolResults: 0,
    mcpResults: new Map(),
    newTurn: 0,
  };
  // Which tool each call id named: a result is its MCP server's when the call was `mcp__server__tool`.
  const calledTool = new Map<string, string>();
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    const group = mcpServer(toolName(tool)) ?? 'built-in';
    const g = out.tools.get(group) ?? { tokens: 0, count: 0 };
    g.tokens += counter.count(stringifyWithin(tool));
    g.count++;
    out.tools.set(group, g);
  }
  // The new turn: whatever follows the model's last answer (the user's message, the tool results it asked for).
  const lastAssistant = conv.input.findLastIndex((m) => m.role === 'assistant');
  conv.input.forEach((m: Message, i) => {
    if (SYSTEM_ROLES.has(m.role)) {
      out.system += sum(m.parts);
      return;
    }
    for (const p of m.parts) {
      const n = counter.count(partText(p));
      if (p.type === 'tool_call' && typeof p.id === 'string' && typeof p.name === 'string')
        calledTool.set(p.id, p.name);
      const server =
        p.type === 'tool_call_response' && typeof p.id === 'string' ? mcpServer(calledTool.get(p.id) ?? '') : undefined;
      if (server !== undefined) out.mcpResults.set(server, (out.mcpResults.get(server) ?? 0) + n);
      else if (i > lastAssistant) out.newTurn += n;
      else if (p.type === 'tool_call_response') out.toolResults += n;
      else out.history += n;
    }
  });
  return out;
}

export interface BreakdownInput {
  protocol: Protocol;
  body: Record<string, unknown>;
  model: string | undefined;
  /** The usage's exact prompt count (record.tokens: input + cache read + both writes), when known. */
  exactTotal?: number;
  counter: TokenCounter;
  /** The session's previous turn, for the growth. */
  previous?: { seq: number; id: string; total: number };
}

/**
 * The request's context in parts. For the model's own encoding the parts are
 * the counted tokens (the exact total is a little more: each message's framing);
 * for another family they are scaled to the exact total and `estimated`.
 */
export function contextBreakdown(input: BreakdownInput): ContextBreakdown {
  const { own } = encodingFor(input.model);
  const c = countParts(input.protocol, input.body, input.counter);
  const parts: ContextPart[] = [{ kind: 'system', label: 'system', tokens: c.system }];
  // MCP servers by size, built-ins last.
  const groups = [...c.tools.entries()].sort(([a, x], [b, y]) =>
    a === 'built-in' ? 1 : b === 'built-in' ? -1 : y.tokens - x.tokens,
  );
  for (const [group, g] of groups) {
    const name = group === 'built-in' ? 'built-in' : `mcp__${group}`;
    parts.push({ kind: 'tools', label: `tools: ${name} (${g.count})`, group, tokens: g.tokens });
  }
  parts.push(
    { kind: 'history', label: 'conversation history', tokens: c.history },
    { kind: 'tool-results', label: 'tool results', tokens: c.toolResults },
    // An MCP server's results apart, named as its tools are: what its calls added to the context.
    ...[...c.mcpResults.entries()].map(([server, tokens]): ContextPart => ({
      kind: 'tool-results',
      label: `tool results: mcp__${server}`,
      group: server,
      tokens,
    })),
    { kind: 'new-turn', label: 'new turn', tokens: c.newTurn },
  );
  const counted = parts.reduce((n, p) => n + p.tokens, 0);
  const exact = input.exactTotal !== undefined && input.exactTotal > 0;
  const total = exact ? input.exactTotal! : counted;
  const estimated = !own;
  if (estimated && exact && counted > 0) scaleTo(parts, total, counted);
  const out: ContextBreakdown = { total, exact, estimated, tokenizer: input.counter.encoding, parts };
  if (input.previous)
    out.growth = { tokens: total - input.previous.total, previous: { seq: input.previous.seq, id: input.previous.id } };
  return out;
}

/** Each part's share of `counted`, applied to `total`; the rounding remainder goes to the largest part, so they add up. */
function scaleTo(parts: ContextPart[], total: number, counted: number): void {
  let sum = 0;
  for (const p of parts) {
    p.tokens = Math.round((p.tokens * total) / counted);
    sum += p.tokens;
  }
  const largest = parts.reduce((a, b) => (b.tokens > a.tokens ? b : a));
  largest.tokens += total - sum;
}
