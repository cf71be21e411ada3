// The simulator's HTTP in and out: a JSON request body read under the relay's limits (type, size, JSON, depth)
// and a JSON answer or error in the envelope of the route it was asked on.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nestsDeeperThan } from '../rules/json/nesting.js';
import { looksLikeMessagesTarget } from '../rules/protocols/anthropic-messages.js';
import { errorBody, SimError, type Envelope } from './relay-errors.js';
import { isObject } from './check.js';
import type { RecordedRequest } from './request-record.js';

const MAX_BODY_BYTES = 64 * 1024 * 1024;

export function envelopeFor(pathname: string): Envelope {
  // The relay answers in Anthropic's envelope wherever a /messages segment is (pathname has no query).
  return looksLikeMessagesTarget(pathname) ? 'anthropic' : 'openai';
}

export function send(
  res: ServerResponse,
  rec: RecordedRequest | undefined,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  if (rec) rec.status = status;
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  rec: RecordedRequest | undefined,
  err: SimError,
  envelope: Envelope,
  requestId: string,
): void {
  const headers: Record<string, string> = {};
  if (err.retryAfter !== undefined) headers['Retry-After'] = String(err.retryAfter);
  if (err.code === 'request_too_large') headers.Connection = 'close';
  send(res, rec, err.status, errorBody(err, envelope, requestId), headers);
}

export async function readJsonBody(
  req: IncomingMessage,
  rec: RecordedRequest,
  preread?: Buffer,
): Promise<Record<string, unknown>> {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type !== 'application/json') {
    throw new SimError(
      'invalid_request',
      `POST requests must send the header Content-Type: application/json (got ${type ? `"${type}"` : 'no Content-Type'})`,
      'Content-Type',
    );
  }
  const declared = Number(req.headers['content-length']);
  const tooLarge = () =>
    new SimError('request_too_large', `Request body too large: the limit is ${MAX_BODY_BYTES / 1024 / 1024} MiB`);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of preread ? [preread] : (req as AsyncIterable<Buffer>)) {
    total += chunk.length;
    if (total > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  rec.bodyBytes = total;
  const body = Buffer.concat(chunks, total);
  // A digest, not the body: tests check a replay arrived byte for byte without the record holding prompts.
  rec.bodySha256 = createHash('sha256').update(body).digest('hex');
  let data: unknown;
  try {
    data = JSON.parse(body.toString('utf8'));
  } catch (err) {
    // V8's message quotes the input, which may hold a secret: report only the position.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new SimError(
      'invalid_json',
      `Invalid JSON in the request body${at ? ` at position ${at}` : ''}. Send one JSON object`,
    );
  }
  if (!isObject(data)) throw new SimError('invalid_request', 'Invalid request body: expected a JSON object');
  // The endpoints' walkers (text, tools, the prompt cache) recurse: past the limit nothing walks the body (issue 39 H-1).
  if (nestsDeeperThan(data, SIM_MAX_NESTING)) throw tooDeep();
  if (typeof data.model === 'string') rec.model = data.model.slice(0, 200);
  return data;
}

/**
 * Deeper than any real request and than the proxy's own analysis limit (200, past which it says "too large to
 * compare"), so such a request still reaches the proxy's answer; shallow enough for the simulator's recursive walkers.
 */
export const SIM_MAX_NESTING = 1000;

function tooDeep(): SimError {
  return new SimError(
    'invalid_request',
    `Invalid request body: nested deeper than ${SIM_MAX_NESTING} levels. Send a flatter JSON object`,
  );
}
