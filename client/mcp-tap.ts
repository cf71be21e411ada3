// What `loopgate mcp-wrap` sees of a stdio MCP server's traffic: a copy of each
// direction's bytes (the bytes themselves pass unchanged elsewhere), cut into
// newline-delimited JSON-RPC messages, each request from the client paired with
// the server's response by id, and the pair reported to the proxy as one call.
// A line past MAX_MCP_MESSAGE_CHARS is skipped, not read.
import {
  MAX_MCP_MESSAGE_CHARS,
  MAX_REPORTED_MESSAGE_CHARS,
  readMcpMessage,
  type McpRequestFacts,
} from '../rules/wire/mcp-messages.js';
import type { McpCallReport } from '../core/local-api.js';

/** Requests awaiting their response at once; a client past it (none real) loses the oldest's record. */
const MAX_PENDING = 1000;

/** Splits a byte stream into lines, bounded: a line longer than the limit is reported as skipped. */
export class LineTap {
  #parts: Buffer[] = [];
  #bytes = 0;
  #skipping = false;

  constructor(private readonly onLine: (line: Buffer) => void) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      if (!this.#skipping) {
        this.#bytes += piece.length;
        if (this.#bytes > MAX_MCP_MESSAGE_CHARS) {
          this.#skipping = true;
          this.#parts = [];
        } else this.#parts.push(piece);
      }
      if (nl < 0) return;
      if (!this.#skipping && this.#bytes > 0) this.onLine(Buffer.concat(this.#parts));
      this.#parts = [];
      this.#bytes = 0;
      this.#skipping = false;
      start = nl + 1;
    }
  }
}

interface Pending extends McpRequestFacts {
  startedAt: number;
  time: string;
  bytesIn: number;
  text: string;
}

/** Pairs the client's requests with the server's responses and makes a report of each call. */
export class McpCallPairer {
  readonly #pending = new Map<string, Pending>();

  constructor(
    private readonly server: string,
    private readonly report: (call: McpCallReport) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A line the client sent the server. */
  fromClient(line: Buffer): void {
    const read = readMcpMessage(line.toString('utf8'));
    if (read.kind !== 'request' || read.request.id === undefined) return;
    if (this.#pending.size >= MAX_PENDING) this.#pending.delete(this.#pending.keys().next().value!);
    this.#pending.set(read.request.id, {
      ...read.request,
      startedAt: this.now(),
      time: new Date().toISOString(),
      bytesIn: line.length,
      text: line.subarray(0, MAX_REPORTED_MESSAGE_CHARS).toString('utf8'),
    });
  }

  /** A line the server sent the client. */
  fromServer(line: Buffer): void {
    const read = readMcpMessage(line.toString('utf8'));
    if (read.kind !== 'response') return;
    const call = this.#pending.get(read.response.id);
    if (!call) return;
    this.#pending.delete(read.response.id);
    const report: McpCallReport = {
      server: this.server,
      rpcMethod: call.method,
      time: call.time,
      totalMs: Math.round((this.now() - call.startedAt) * 100) / 100,
      bytesIn: call.bytesIn,
      bytesOut: line.length,
      resultChars: read.response.resultChars,
      request: call.text,
      response: line.subarray(0, MAX_REPORTED_MESSAGE_CHARS).toString('utf8'),
    };
    if (call.target !== undefined) report.target = call.target;
    if (read.response.error) report.error = read.response.error;
    this.report(report);
  }
}
