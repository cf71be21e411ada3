// MCP's JSON-RPC messages as Loopgate reads them to record a call: the request
// (method, id, the tool, prompt or resource it names) and its response (the
// error, the size of the result's text). Read only on MCP routes and from the
// stdio wrapper's copy, never on the model path: each message is parsed whole,
// but only up to MAX_MCP_MESSAGE_CHARS and MAX_NESTING deep (rules/json/nesting.ts),
// past which it is passed on unread. Pure.
import { jsonTextDeeperThan } from '../json/nesting.js';
import type { McpCallReport } from '../../core/local-api.js';

/** A message longer than this is forwarded but not read (a call it answers is recorded without its result's size). */
export const MAX_MCP_MESSAGE_CHARS = 4 * 1024 * 1024;

/** Longest tool, prompt or resource name kept in a record. */
const MAX_TARGET_CHARS = 300;

export interface McpRequestFacts {
  /** The JSON-RPC id as a key (`s:` string or `n:` number); absent for a notification. */
  id?: string;
  method: string;
  target?: string;
}

export interface McpResponseFacts {
  id: string;
  error?: { code: number | 'tool-error'; message: string };
  /** Characters of text in the result: content blocks, resource contents, prompt messages. */
  resultChars: number;
}

export type McpMessage =
  { kind: 'request'; request: McpRequestFacts } | { kind: 'response'; response: McpResponseFacts } | { kind: 'unread' };

/** Reads one JSON-RPC message (one line on stdio, one POST body, one SSE event's data). */
export function readMcpMessage(text: string): McpMessage {
  const value = parseBounded(text);
  if (!isObject(value)) return { kind: 'unread' };
  const id = rpcId(value.id);
  if (typeof value.method === 'string') {
    const request: McpRequestFacts = { method: clip(value.method) };
    if (id !== undefined) request.id = id;
    const target = targetOf(value.method, value.params);
    if (target !== undefined) request.target = target;
    return { kind: 'request', request };
  }
  if (id === undefined || !('result' in value || 'error' in value)) return { kind: 'unread' };
  const response: McpResponseFacts = { id, resultChars: resultChars(value.result) };
  if (isObject(value.error)) {
    const code = typeof value.error.code === 'number' ? value.error.code : 0;
    response.error = { code, message: clip(String(value.error.message ?? '')) };
  } else if (isObject(value.result) && value.result.isError === true) {
    response.error = { code: 'tool-error', message: clip(firstText(value.result.content) ?? 'the tool said isError') };
  }
  return { kind: 'response', response };
}

/** The JSON-RPC messages of a streamable-HTTP answer: the body (application/json) or each SSE event's data. */
export function answerMessages(text: string, eventStream: boolean): string[] {
  if (!eventStream) return [text];
  const out: string[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
    if (data.length) out.push(data.join('\n'));
  }
  return out;
}

function parseBounded(text: string): unknown {
  if (text.length > MAX_MCP_MESSAGE_CHARS || jsonTextDeeperThan(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function rpcId(id: unknown): string | undefined {
  if (typeof id === 'string') return `s:${id}`;
  if (typeof id === 'number') return `n:${id}`;
  return undefined;
}

function clip(s: string): string {
  return s.length <= MAX_TARGET_CHARS ? s : `${s.slice(0, MAX_TARGET_CHARS)}…`;
}

/** What a call names: tools/call and prompts/get a `name`, resources/read a `uri`. */
function targetOf(method: string, params: unknown): string | undefined {
  if (!isObject(params)) return undefined;
  const t = method === 'resources/read' || method === 'resources/subscribe' ? params.uri : params.name;
  return typeof t === 'string' ? clip(t) : undefined;
}

/** The text a result puts in front of the model: tools' content, resources' contents, prompts' messages. */
function resultChars(result: unknown): number {
  if (!isObject(result)) return 0;
  let n = 0;
  const blocks = [
    ...arr(result.content),
    ...arr(result.contents),
    ...arr(result.messages).map((m) => (isObject(m) ? m.content : undefined)),
  ];
  for (const b of blocks) {
    if (!isObject(b)) continue;
    if (typeof b.text === 'string') n += b.text.length;
    else if (isObject(b.resource) && typeof b.resource.text === 'string') n += b.resource.text.length;
  }
  if (isObject(result.structuredContent) && n === 0) n = JSON.stringify(result.structuredContent).length;
  return n;
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function firstText(content: unknown): string | undefined {
  const b = arr(content).find((x) => isObject(x) && typeof x.text === 'string') as { text: string } | undefined;
  return b?.text;
}

/** What the result adds to the next model request's context, estimated at 4 characters a token. */
export function estimatedTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** Longest message text a report may carry (the wrapper cuts there; the ring keeps less). */
export const MAX_REPORTED_MESSAGE_CHARS = 64 * 1024;

/**
 * A report `loopgate mcp-wrap` posted, checked field by field: the report, or what is wrong with it.
 * Strings are cut to their bounds; numbers must be finite and not negative.
 */
export function readMcpCallReport(
  value: unknown,
): { ok: true; report: McpCallReport } | { ok: false; problem: string } {
  if (!isObject(value)) return { ok: false, problem: 'The body must be a JSON object (an McpCallReport).' };
  const v = value;
  if (typeof v.server !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(v.server))
    return { ok: false, problem: '"server" must be a name of letters, digits, _ and - (1–64).' };
  if (typeof v.rpcMethod !== 'string' || v.rpcMethod === '')
    return { ok: false, problem: '"rpcMethod" (the JSON-RPC method, e.g. tools/call) is missing.' };
  if (typeof v.time !== 'string' || Number.isNaN(Date.parse(v.time)))
    return { ok: false, problem: '"time" must be an ISO time.' };
  for (const n of ['totalMs', 'bytesIn', 'bytesOut'] as const)
    if (typeof v[n] !== 'number' || !Number.isFinite(v[n]) || v[n] < 0)
      return { ok: false, problem: `"${n}" must be a number, 0 or more.` };
  const report: McpCallReport = {
    server: v.server,
    rpcMethod: clip(v.rpcMethod),
    time: new Date(Date.parse(v.time)).toISOString(),
    totalMs: v.totalMs as number,
    bytesIn: v.bytesIn as number,
    bytesOut: v.bytesOut as number,
  };
  if (typeof v.target === 'string') report.target = clip(v.target);
  if (isObject(v.error)) {
    const code = v.error.code === 'tool-error' || typeof v.error.code === 'number' ? v.error.code : 0;
    report.error = {
      code: typeof code === 'number' && !Number.isFinite(code) ? 0 : code,
      message: clip(String(v.error.message ?? '')),
    };
  }
  if (typeof v.resultChars === 'number' && Number.isFinite(v.resultChars) && v.resultChars >= 0)
    report.resultChars = v.resultChars;
  if (typeof v.request === 'string') report.request = v.request.slice(0, MAX_REPORTED_MESSAGE_CHARS);
  if (typeof v.response === 'string') report.response = v.response.slice(0, MAX_REPORTED_MESSAGE_CHARS);
  return { ok: true, report };
}
