// POST /_loopgate/calls/mcp: `loopgate mcp-wrap` reports a call to a stdio MCP
// server, and it becomes a record like an HTTP MCP call's (mcp-relay.ts): the
// same ring, log, session, console line and span. The wrapper's credential
// decides the session: a run's credential (which `loopgate run` gave the agent,
// and the agent its MCP servers) joins the run's last model request's session.
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { ProxyContext } from './context.js';
import type { ClientReply } from './client-reply.js';
import type { TrafficRecord } from '../../core/record.js';
import { LOCAL_ERROR_CODES, LOCAL_PATHS, type McpCallAnswer } from '../../core/local-api.js';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { checkToken, presentedCredential, type AuthContext } from './authenticate.js';
import { verifyRunCredential } from '../../rules/access/run-credential.js';
import { estimatedTokens, readMcpCallReport, MAX_REPORTED_MESSAGE_CHARS } from '../../rules/wire/mcp-messages.js';
import { jsonTextDeeperThan } from '../../rules/json/nesting.js';
import { capturedBody, type NewEntry } from '../traffic/ring-entry.js';
import { mcpErrorCode, recordMcpCall, type RecordContext } from './build-record.js';

/** A report holds two cut messages and a few fields. */
const MAX_REPORT_BYTES = 4 * MAX_REPORTED_MESSAGE_CHARS + 16 * 1024;

export async function handleMcpReport(
  req: IncomingMessage,
  reply: ClientReply,
  ctx: AuthContext & RecordContext & Pick<ProxyContext, 'hintOnce'>,
): Promise<void> {
  // The model API's scope: a run's credential is what the wrapper under `loopgate run` holds.
  checkToken(req, ctx, 'model-api');
  if (req.method !== 'POST')
    throw new ProxyError(
      405,
      LOCAL_ERROR_CODES.methodNotAllowed,
      `${LOCAL_PATHS.mcpCalls} takes POST (an McpCallReport).`,
    );
  const text = await readReport(req);
  let value: unknown;
  try {
    value = jsonTextDeeperThan(text) ? undefined : JSON.parse(text);
  } catch {
    value = undefined;
  }
  const read = readMcpCallReport(value);
  if (!read.ok) throw new ProxyError(400, LOCAL_ERROR_CODES.badBody, read.problem);
  const report = read.report;
  const id = randomUUID();
  const time = Date.parse(report.time);
  const session = ctx.sessions.identify({
    headers: {},
    body: () => undefined,
    run: verifyRunCredential(ctx.token, presentedCredential(req)),
    requestId: id,
    time,
    conversational: false,
    mcp: true,
  });
  const raw: TrafficRecord = {
    time: report.time,
    id,
    method: 'STDIO',
    path: `stdio:${report.server}`,
    canonicalPath: `stdio:${report.server}`,
    rewrites: [],
    // Delivered, as an HTTP MCP call answered with a JSON-RPC error is: the error code says it failed.
    status: 200,
    totalMs: report.totalMs,
    bytesIn: report.bytesIn,
    bytesOut: report.bytesOut,
    retries: 0,
    clientAborted: false,
    mcp: {
      server: report.server,
      transport: 'stdio',
      rpcMethod: report.rpcMethod,
      ...(report.target !== undefined ? { target: report.target } : {}),
      ...(report.error ? { error: report.error } : {}),
      ...(report.resultChars !== undefined
        ? { resultChars: report.resultChars, resultTokens: estimatedTokens(report.resultChars) }
        : {}),
    },
  };
  raw.errorCode = mcpErrorCode(raw.mcp!);
  if (session) raw.session = session;
  const record = ctx.redactor.value(raw);
  const entry: NewEntry = { record, bodies: {} };
  // The messages as captured bytes: the ring's reader redacts them (traffic/ring-entry.ts), as it does every body.
  if (report.request !== undefined) entry.bodies.requestBody = bodyOf(report.request);
  if (report.response !== undefined) entry.bodies.responseBody = bodyOf(report.response);
  recordMcpCall(record, entry, ctx);
  reply.answer(200, 'application/json', JSON.stringify({ id } satisfies McpCallAnswer));
}

function bodyOf(text: string) {
  const buf = Buffer.from(text);
  return capturedBody([buf], buf.length, false);
}

function readReport(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REPORT_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        reject(new ProxyError(413, LOCAL_ERROR_CODES.badBody, `A report is at most ${MAX_REPORT_BYTES} bytes.`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
