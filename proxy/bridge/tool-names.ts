// Responses tools as the chat route sees them, and back. `namespace` tools
// (Codex groups its tools in them) are flattened to `<namespace>__<name>`
// function names, and calls to those names go back as calls inside the
// namespace; `custom` tools travel as one-string-argument functions.

import { createHash } from 'node:crypto';
import { isRecord, type Json } from './types.js';

export interface CallerTool {
  name: string;
  namespace?: string;
  custom: boolean;
}

/**
 * Chat function names allow [A-Za-z0-9_-]{1,64}: a double underscore joins namespace and
 * name, and a name that would not fit is shortened with a hash of the whole, so it stays
 * unique and the same on the way out and back.
 */
export function chatToolName(name: string, namespace?: string): string {
  const joined = namespace ? `${namespace}__${name}` : name;
  if (/^[A-Za-z0-9_-]{1,64}$/.test(joined)) return joined;
  return `${joined.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 55)}_${createHash('sha256').update(joined).digest('hex').slice(0, 8)}`;
}

/** The function and custom tools of a Responses request (tools + additional_tools items), by chat name. */
export function callerTools(request: Json | undefined): Map<string, CallerTool> {
  const out = new Map<string, CallerTool>();
  const add = (t: unknown, namespace?: string) => {
    if (!isRecord(t) || typeof t.name !== 'string') return;
    if (t.type === 'namespace' && Array.isArray(t.tools)) {
      for (const inner of t.tools) add(inner, t.name);
    } else if (t.type === 'function' || t.type === 'custom') {
      out.set(chatToolName(t.name, namespace), { name: t.name, custom: t.type === 'custom', ...(namespace ? { namespace } : {}) });
    }
  };
  for (const t of requestTools(request)) add(t);
  return out;
}

/** Every tool definition of a request: `tools`, then those of `additional_tools` input items. */
export function requestTools(request: Json | undefined): unknown[] {
  const tools = Array.isArray(request?.tools) ? request.tools : [];
  const items = Array.isArray(request?.input) ? request.input : [];
  return [...tools, ...items.flatMap((i) => (isRecord(i) && i.type === 'additional_tools' && Array.isArray(i.tools) ? i.tools : []))];
}

/** The caller's tool behind a chat tool call name (an unknown name is taken as a plain function). */
export function callerTool(tools: Map<string, CallerTool>, chatName: string): CallerTool {
  return tools.get(chatName) ?? { name: chatName, custom: false };
}
