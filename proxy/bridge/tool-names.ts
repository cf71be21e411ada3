// Responses tools as the chat route sees them, and back. `namespace` tools
// (Codex groups its tools in them) are flattened to `<namespace>__<name>`
// function names, and calls to those names go back as calls inside the
// namespace; `custom` tools travel as one-string-argument functions.
//
// Why a per-request table and not a fixed formula: `__` may appear inside a
// namespace or a tool name (`files`/`read__secret` and `files__read`/`secret`
// both join to `files__read__secret`), and chat names allow only
// [A-Za-z0-9_-]{1,64}. No readable join of two free strings into that alphabet
// is injective, and an escaped one would rename every MCP-style tool the model
// knows. So each tool keeps its readable join when that is valid and no other
// tool of the request joins to the same text; otherwise it gets the readable
// prefix plus a hash of the exact (namespace, name) pair. The hash depends on
// the pair alone and the choice on the whole request, so the request, its
// history and the answer (translated from the same request) agree on every name.

import { createHash } from 'node:crypto';
import { BridgeReject } from './reject.js';
import { isRecord, type Json } from './types.js';

export interface CallerTool {
  name: string;
  namespace?: string;
  custom: boolean;
}

/** OpenAI's function-name rule (Chat Completions). */
export const CHAT_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const HASH_CHARS = 12; // 48 bits: two pairs of one request never meet by chance

/** The readable join: what a model is shown whenever it is unambiguous. */
function joinedToolName(name: string, namespace?: string): string {
  return namespace ? `${namespace}__${name}` : name;
}

/** The collision-proof name of one (namespace, name) pair: readable prefix, `_`, hash of the exact pair. */
export function hashedToolName(name: string, namespace?: string): string {
  const digest = createHash('sha256').update(pairKey(name, namespace)).digest('hex').slice(0, HASH_CHARS);
  const prefix = joinedToolName(name, namespace)
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(0, 64 - 1 - HASH_CHARS);
  return `${prefix}_${digest}`;
}

function pairKey(name: string, namespace?: string): string {
  return JSON.stringify([namespace ?? null, name]);
}

export class ToolNames {
  private readonly toChat = new Map<string, string>(); // pairKey → chat name
  private readonly fromChat = new Map<string, CallerTool>();

  /**
   * Every (namespace, name) pair a request mentions gets a distinct valid chat name. Throws a
   * BridgeReject naming both tools when the only safe name of one is already another's (a tool
   * named to look like a hashed name: no chance event).
   */
  constructor(pairs: Iterable<CallerTool>) {
    const unique = new Map<string, CallerTool>();
    for (const p of pairs) {
      const key = pairKey(p.name, p.namespace);
      const seen = unique.get(key);
      // A definition says whether the tool is custom; a history call may only guess.
      if (!seen || (p.custom && !seen.custom)) unique.set(key, p);
    }
    const joins = new Map<string, number>();
    for (const p of unique.values()) {
      const j = joinedToolName(p.name, p.namespace);
      joins.set(j, (joins.get(j) ?? 0) + 1);
    }
    const hashed: [string, CallerTool][] = [];
    for (const [key, p] of unique) {
      const j = joinedToolName(p.name, p.namespace);
      if (CHAT_TOOL_NAME.test(j) && joins.get(j) === 1) this.assign(key, j, p);
      else hashed.push([key, p]);
    }
    for (const [key, p] of hashed) {
      const chat = hashedToolName(p.name, p.namespace);
      const holder = this.fromChat.get(chat);
      if (holder) {
        throw new BridgeReject(
          'tools',
          `Tools ${describe(p)} and ${describe(holder)} would both be called '${chat}' on the chat route, so a call could come back as the wrong tool. Rename one of them.`,
        );
      }
      this.assign(key, chat, p);
    }
  }

  private assign(key: string, chat: string, p: CallerTool): void {
    this.toChat.set(key, chat);
    this.fromChat.set(chat, p);
  }

  /** The chat name of a pair the request mentions (one it does not mention gets its hashed name). */
  chatName(name: string, namespace?: string): string {
    return this.toChat.get(pairKey(name, namespace)) ?? hashedToolName(name, namespace);
  }

  /** The caller's tool behind a chat tool call name (an unknown name is taken as a plain function). */
  callerTool(chatName: string): CallerTool {
    return this.fromChat.get(chatName) ?? { name: chatName, custom: false };
  }

  /** Every name of the request, for the bridge's own checks and the tests. */
  entries(): [chatName: string, tool: CallerTool][] {
    return [...this.fromChat];
  }
}

function describe(t: CallerTool): string {
  return t.namespace ? `'${t.name}' in namespace '${t.namespace}'` : `'${t.name}'`;
}

/** The names of a Responses request: its tools (namespaces flattened, one level), history calls and tool_choice. */
export function toolNamesOf(request: Json | undefined): ToolNames {
  return new ToolNames(requestToolPairs(request));
}

function* requestToolPairs(request: Json | undefined): Generator<CallerTool> {
  const ns = (v: unknown) => (typeof v === 'string' ? { namespace: v } : {});
  for (const t of requestTools(request)) {
    if (!isRecord(t) || typeof t.name !== 'string') continue;
    if (t.type === 'namespace' && Array.isArray(t.tools)) {
      for (const inner of t.tools) {
        if (
          isRecord(inner) &&
          typeof inner.name === 'string' &&
          (inner.type === 'function' || inner.type === 'custom')
        ) {
          yield { name: inner.name, namespace: t.name, custom: inner.type === 'custom' };
        }
      }
    } else if (t.type === 'function' || t.type === 'custom') yield { name: t.name, custom: t.type === 'custom' };
  }
  const items = Array.isArray(request?.input) ? request.input : [];
  for (const i of items) {
    if (isRecord(i) && (i.type === 'function_call' || i.type === 'custom_tool_call') && typeof i.name === 'string') {
      yield { name: i.name, ...ns(i.namespace), custom: i.type === 'custom_tool_call' };
    }
  }
  const tc = request?.tool_choice;
  if (isRecord(tc) && typeof tc.name === 'string')
    yield { name: tc.name, ...ns(tc.namespace), custom: tc.type === 'custom' };
  if (isRecord(tc) && Array.isArray(tc.tools)) {
    for (const a of tc.tools)
      if (isRecord(a) && typeof a.name === 'string')
        yield { name: a.name, ...ns(a.namespace), custom: a.type === 'custom' };
  }
}

/**
 * The names of an Anthropic Messages request: its client tools, the history's tool_use blocks and
 * tool_choice. Anthropic allows longer names than chat's 64 characters (MCP tools in Claude Code
 * run long); those, and only those, travel hashed.
 */
export function messagesToolNamesOf(request: Json | undefined): ToolNames {
  const pairs: CallerTool[] = [];
  for (const t of Array.isArray(request?.tools) ? request.tools : []) {
    if (isRecord(t) && typeof t.name === 'string' && (t.type === undefined || t.type === null || t.type === 'custom'))
      pairs.push({ name: t.name, custom: false });
  }
  for (const m of Array.isArray(request?.messages) ? request.messages : []) {
    if (!isRecord(m) || !Array.isArray(m.content)) continue;
    for (const b of m.content)
      if (isRecord(b) && b.type === 'tool_use' && typeof b.name === 'string')
        pairs.push({ name: b.name, custom: false });
  }
  const tc = request?.tool_choice;
  if (isRecord(tc) && typeof tc.name === 'string') pairs.push({ name: tc.name, custom: false });
  return new ToolNames(pairs);
}

/** Every tool definition of a request: `tools`, then those of `additional_tools` input items. */
export function requestTools(request: Json | undefined): unknown[] {
  const tools = Array.isArray(request?.tools) ? request.tools : [];
  const items = Array.isArray(request?.input) ? request.input : [];
  return [
    ...tools,
    ...items.flatMap((i) => (isRecord(i) && i.type === 'additional_tools' && Array.isArray(i.tools) ? i.tools : [])),
  ];
}
