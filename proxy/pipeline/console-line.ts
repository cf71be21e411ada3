// A request's console line (serve's output, the editor's output channel), in parts: built from the redacted record,
// each client-chosen value cut short and made printable, so one request stays one readable line.
import type { McpCall, TrafficRecord } from '../../core/record.js';
import type { RequestLineParts } from '../../core/request-line.js';
import { printable } from '../../rules/terminal/printable.js';

/** One line stays readable: client-chosen values (paths, model names) are cut. */
function short(text: string): string {
  return text.length <= 200 ? text : `${text.slice(0, 200)}…`;
}

/**
 * `POST /v1/chat/completions 200 gpt-4o-mini 12ms` plus rewrite notes, the code and the hint, built from
 * the redacted record. In parts, as the editor receives them, so it never cuts the line apart;
 * core/request-line.ts joins them.
 */
export function consoleParts(rec: TrafficRecord, hint: string | undefined, showKey: boolean): RequestLineParts {
  if (rec.mcp) return mcpConsoleParts(rec, rec.mcp);
  const parts = [rec.method, short(rec.canonicalPath), String(rec.status || '-')];
  if (rec.model) parts.push(rec.alias ? `${short(rec.alias.from)}->${short(rec.model)}` : short(rec.model));
  if (rec.servedModel) parts.push(`(demo: served ${short(rec.servedModel)})`);
  if (rec.stream) parts.push('stream');
  parts.push(`${Math.round(rec.totalMs)}ms`);
  if (rec.rewrites.length) parts.push(`rewrote ${short(rec.path)}`);
  if (showKey && rec.key) parts.push(`key ${rec.key}`);
  if (rec.bridge) parts.push(`bridge ${rec.bridge}`);
  if (rec.clientAborted) parts.push('client-aborted');
  // A 200 stream that broke or ended in an error event carries an errorCode too.
  const code = rec.diagnosis ?? rec.errorCode;
  return {
    line: printable(parts.join(' ')),
    diagnosis: code && printable(code),
    hint: code && hint ? printable(hint) : undefined,
  };
}

/** `MCP notes tools/call lookup 200 12ms`: the server, the call, and how it ended. */
function mcpConsoleParts(rec: TrafficRecord, mcp: McpCall): RequestLineParts {
  const parts = ['MCP', mcp.server, mcp.rpcMethod];
  if (mcp.target) parts.push(short(mcp.target));
  parts.push(String(rec.status || '-'), `${Math.round(rec.totalMs)}ms`);
  if (mcp.transport === 'stdio') parts.push('stdio');
  const code = rec.diagnosis ?? rec.errorCode;
  return {
    line: printable(parts.join(' ')),
    diagnosis: code && printable(code),
    hint: code && mcp.error ? printable(short(mcp.error.message)) : undefined,
  };
}
