// Reads upstream chat.completion.chunk payloads into a small list of operations
// both stream translators share.

import { readChatUsage } from '../../rules/protocols/chat-completions.js';
import { isRecord, type Json } from './types.js';

export type ChunkOp =
  | { op: 'text'; text: string }
  | { op: 'reasoning'; text: string }
  | { op: 'tool-start'; index: number; id: string; name: string }
  | { op: 'tool-args'; index: number; args: string }
  | { op: 'finish'; reason: string; matchedStop?: string }
  | { op: 'usage'; input?: number; output?: number; cached?: number; reasoning?: number }
  | { op: 'error'; message: string; code?: string };

export interface ToolSeen {
  id: string;
  name: string;
  /** tool-start has been reported. Some upstreams send the name after the first delta, so the start waits for it. */
  started: boolean;
  /** Arguments that arrived before the name. */
  pending: string;
}

/** `seen` tracks the tool calls by index, so a start is reported once (and only once its name is known). */
export function chunkOps(data: string, seen: Map<number, ToolSeen>, mkId: (index: number) => string): ChunkOp[] {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return [
      {
        op: 'error',
        message: 'The upstream chat route sent an event that is not JSON.',
        code: 'bridge_bad_upstream_event',
      },
    ];
  }
  if (!isRecord(json)) return [];
  if (json.error !== undefined) return [upstreamStreamError(json.error)];
  const ops: ChunkOp[] = [];
  const choices = Array.isArray(json.choices) ? json.choices : [];
  // Only the first choice is bridged (n > 1 is refused at request time).
  const choice = choices.find((c) => isRecord(c) && (c.index === 0 || c.index === undefined));
  if (isRecord(choice)) {
    const delta = isRecord(choice.delta) ? choice.delta : {};
    const thought = reasoningText(delta);
    if (thought) ops.push({ op: 'reasoning', text: thought });
    if (typeof delta.content === 'string' && delta.content.length > 0) ops.push({ op: 'text', text: delta.content });
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) ops.push({ op: 'text', text: delta.refusal });
    if (Array.isArray(delta.tool_calls)) {
      for (const [pos, tc] of delta.tool_calls.entries()) {
        if (!isRecord(tc)) continue;
        const index = typeof tc.index === 'number' ? tc.index : pos;
        const fn = isRecord(tc.function) ? tc.function : {};
        let tool = seen.get(index);
        if (!tool) {
          tool = { id: '', name: '', started: false, pending: '' };
          seen.set(index, tool);
        }
        if (!tool.started && !tool.id && typeof tc.id === 'string' && tc.id) tool.id = tc.id;
        if (!tool.name && typeof fn.name === 'string' && fn.name) tool.name = fn.name;
        const args = typeof fn.arguments === 'string' ? fn.arguments : '';
        if (tool.started) {
          if (args) ops.push({ op: 'tool-args', index, args });
        } else if (tool.name) {
          ops.push(...startTool(index, tool, mkId, args));
        } else {
          tool.pending += args;
        }
      }
    }
    if (typeof choice.finish_reason === 'string' && choice.finish_reason) {
      // A call whose name never came is still reported, so its arguments are not lost.
      for (const [index, tool] of seen) if (!tool.started) ops.push(...startTool(index, tool, mkId, ''));
      ops.push({ op: 'finish', reason: choice.finish_reason, matchedStop: matchedStop(choice) });
    }
  }
  if (isRecord(json.usage)) ops.push({ op: 'usage', ...readChatUsage(json.usage) });
  return ops;
}

/**
 * The model's reasoning on a chat route: DeepSeek, SGLang and older vLLM send
 * `reasoning_content`, newer vLLM and OpenRouter `reasoning`.
 */
export function reasoningText(m: Json): string | undefined {
  for (const key of ['reasoning_content', 'reasoning']) {
    const v = m[key];
    if (typeof v === 'string' && v.length > 0) return v;
  }
  return undefined;
}

function startTool(index: number, tool: ToolSeen, mkId: (index: number) => string, args: string): ChunkOp[] {
  tool.started = true;
  if (!tool.id) tool.id = mkId(index);
  const all = tool.pending + args;
  tool.pending = '';
  const ops: ChunkOp[] = [{ op: 'tool-start', index, id: tool.id, name: tool.name }];
  if (all) ops.push({ op: 'tool-args', index, args: all });
  return ops;
}

/**
 * Chat Completions says only "stop" for both a natural end and a stop sequence.
 * Some upstreams name the matched string (vLLM `stop_reason`, SGLang `matched_stop`).
 */
export function matchedStop(choice: Json): string | undefined {
  for (const key of ['stop_reason', 'matched_stop']) {
    const v = choice[key];
    if (typeof v === 'string' && v.length > 0) return v;
  }
  return undefined;
}

function upstreamStreamError(err: unknown): ChunkOp {
  if (isRecord(err)) {
    const message =
      typeof err.message === 'string' && err.message ? err.message : 'The upstream chat route reported an error.';
    const code = typeof err.code === 'string' ? err.code : typeof err.type === 'string' ? err.type : undefined;
    return { op: 'error', message, code };
  }
  return { op: 'error', message: typeof err === 'string' ? err : 'The upstream chat route reported an error.' };
}
