// Reads the request body under the cap. Small bodies (the common case) are held
// so they can be inspected, retried and bridged; large ones stream through
// without being held (memory stays flat for a 50 MB upload).
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { scanTopLevel } from '../../rules/json/json-top-level.js';
import { REQUEST_VALUE_KEYS } from '../../rules/otlp/genai-facts.js';
import { SESSION_BODY_KEYS } from '../../rules/sessions/session-body.js';
import type { IncomingMessage } from 'node:http';
import type { ProxyContext } from './context.js';
import type { BodyFacts, RequestStart } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import { streamedBytes } from './gc-nudge.js';

/** What the body step reads of the proxy's configuration. */
export type BodyContext = Pick<ProxyContext, 'limits' | 'otlp'>;

/** Bodies up to this size are held in memory and parsed for metadata. */
export const HOLD_BYTES = 1024 * 1024;

function tooLarge(cap: number): ProxyError {
  return new ProxyError(
    413,
    'body-too-large',
    `The request body is larger than ${cap} bytes. Send less (or raise --max-body).`,
  );
}

/**
 * Node's own requestTimeout does not cover a body that stops arriving once the
 * handler runs, so the body read has its own deadline (slowloris on the body).
 */
function armDeadline(start: RequestStart, reply: ClientReply, timeoutMs: number): () => void {
  const timer = setTimeout(
    () => {
      const err = new ProxyError(
        408,
        'body-timeout',
        `The request body did not arrive within ${Math.round(timeoutMs / 1000)} s. Send the whole body promptly.`,
      );
      if (reply.headersSent) {
        reply.lost(err.statusCode, err.code, err.message);
        return void start.req.destroy(err);
      }
      // Answer first, then drop the connection: the rest of the body will never be read.
      reply.refuse(err, { close: true, onSent: () => start.req.destroy(err) });
    },
    Math.max(0, timeoutMs - (performance.now() - start.startedAt)),
  );
  timer.unref();
  return () => clearTimeout(timer);
}

/** Reads the body (under the body deadline, which answers the client itself) and returns what it holds and says. */
export async function readBody(
  start: RequestStart,
  reply: ClientReply,
  ctx: BodyContext,
  holdAll: boolean,
): Promise<BodyFacts> {
  const req = start.req;
  const maxBytes = ctx.limits.maxBodyBytes;
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const disarm = armDeadline(start, reply, ctx.limits.requestTimeoutMs);
  try {
    return await readInto(req, ctx, maxBytes, holdAll, disarm);
  } catch (err) {
    disarm();
    throw err;
  }
}

async function readInto(
  req: IncomingMessage,
  ctx: BodyContext,
  maxBytes: number,
  holdAll: boolean,
  disarm: () => void,
): Promise<BodyFacts> {
  const hold = holdAll ? maxBytes : HOLD_BYTES;
  const { chunks, size, ended } = await readHeld(req, hold, maxBytes);
  if (!ended) {
    const count = { bytes: size };
    const stream = continueStream(
      count,
      chunks,
      req[Symbol.asyncIterator]() as AsyncIterator<Buffer>,
      maxBytes,
      disarm,
    );
    return sniffMetadata(count, stream, chunks[0]!);
  }
  disarm();
  return parseMetadata(req, ctx, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
}

/**
 * A body too large to hold: its byte count grows while the rest streams
 * upstream (read-body's generator alone counts it); a copy with its stream
 * rewritten (a model alias) shares the count.
 */
export class StreamedBody implements BodyFacts {
  constructor(
    private readonly count: { readonly bytes: number },
    readonly bodyStream: AsyncIterable<Buffer>,
    readonly model: string | undefined,
    readonly stream: boolean,
  ) {}

  get bytesIn(): number {
    return this.count.bytes;
  }

  withStream(bodyStream: AsyncIterable<Buffer>, model: string): StreamedBody {
    return new StreamedBody(this.count, bodyStream, model, this.stream);
  }
}

/**
 * Reads until the end or past `hold` bytes (then leaves the request paused).
 * Plain events rather than an async iterator: this runs for every request.
 */
function readHeld(
  req: IncomingMessage,
  hold: number,
  maxBytes: number,
): Promise<{ chunks: Buffer[]; size: number; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: Error | undefined, ended: boolean) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (!ended) req.pause();
      if (err) reject(err);
      else resolve({ chunks, size, ended });
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return done(tooLarge(maxBytes), false);
      chunks.push(chunk);
      if (size > hold) done(undefined, false);
    };
    const onEnd = () => done(undefined, true);
    const onError = (err: Error) => done(err, false);
    // A close without end or error: the client went away mid-body.
    const onClose = () =>
      done(Object.assign(new Error('The request body ended early.'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }), false);
    if (req.readableEnded) return resolve({ chunks, size, ended: true });
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
  });
}

async function* continueStream(
  count: { bytes: number },
  held: Buffer[],
  rest: AsyncIterator<Buffer>,
  maxBytes: number,
  disarm: () => void,
): AsyncGenerator<Buffer> {
  yield* held;
  held.length = 0;
  for (;;) {
    const next = await rest.next();
    if (next.done) {
      disarm();
      return;
    }
    count.bytes += next.value.length;
    if (count.bytes > maxBytes) throw tooLarge(maxBytes);
    streamedBytes(next.value.length);
    yield next.value;
  }
}

function parseMetadata(req: IncomingMessage, ctx: BodyContext, body: Buffer): BodyFacts {
  if (body.length === 0) {
    if (req.method === 'POST')
      throw new ProxyError(400, 'empty-body', 'The request body is empty: send a JSON object with at least "model".');
    return { bytesIn: 0, body };
  }
  // With OTLP export on, the values of the parameters the GenAI conventions name are read in the same pass.
  // So are the spans session identity reads (rules/sessions/session-body.ts): the body is not parsed to find its session.
  const top = scanTopLevel(body, ctx.otlp ? REQUEST_VALUE_KEYS : undefined, SESSION_BODY_KEYS);
  if (!top.ok) {
    throw new ProxyError(
      400,
      'invalid-json',
      `The request body is not valid JSON (${top.reason}, at byte ${top.at}). Check the JSON and retry with the minimal request.`,
    );
  }
  return {
    bytesIn: body.length,
    body,
    params: top.keys,
    model: top.model,
    modelSpan: top.modelSpan,
    stream: top.stream,
    jsonDepth: top.depth,
    jsonObject: true,
    requestValues: top.picked,
    spans: top.spans,
  };
}

/**
 * The bridge walks tool schemas and tool inputs recursively; no real request
 * nests anywhere near this deep, and a deeper one would exhaust the stack.
 */
const MAX_BRIDGED_JSON_DEPTH = 200;

/**
 * The held body as an object, parsed only when something needs all of it (the
 * bridge, once per route it plans: a fresh object each time, so no plan sees
 * another's edits).
 */
export function parsedBody(ex: BodyFacts): Record<string, unknown> {
  if (!ex.body || !ex.jsonObject)
    throw new ProxyError(400, 'bridge-needs-json', 'The protocol bridge needs a JSON request body.');
  if ((ex.jsonDepth ?? 0) > MAX_BRIDGED_JSON_DEPTH) {
    throw new ProxyError(
      400,
      'body-too-deep',
      `The request body nests ${ex.jsonDepth} levels deep (objects and arrays); the protocol bridge takes at most ${MAX_BRIDGED_JSON_DEPTH}. Flatten the tool schema or tool input that nests this deep.`,
    );
  }
  try {
    return JSON.parse(ex.body.toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ProxyError(
      400,
      'invalid-json',
      `The request body is not valid JSON (${(err as Error).message}). Check the JSON and retry with the minimal request.`,
    );
  }
}

/** Large bodies are not parsed; a cheap look at the first chunk finds the usual fields. */
function sniffMetadata(count: { bytes: number }, stream: AsyncIterable<Buffer>, first: Buffer): StreamedBody {
  const head = first.subarray(0, 4096).toString('utf8');
  return new StreamedBody(
    count,
    stream,
    /"model"\s*:\s*"([^"\\]{1,200})"/.exec(head)?.[1],
    /"stream"\s*:\s*true/.test(head),
  );
}
