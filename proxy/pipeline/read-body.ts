// Reads the request body under the cap. Small bodies (the common case) are held
// so they can be inspected, retried and bridged; large ones stream through
// without being held (memory stays flat for a 50 MB upload).
import { ProxyError } from '../rules/proxy-errors.js';
import { scanTopLevel } from '../rules/json-top-level.js';
import { REQUEST_VALUE_KEYS } from '../rules/genai-facts.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';
import { streamedBytes } from './gc-nudge.js';

/** Bodies up to this size are held in memory and parsed for metadata. */
export const HOLD_BYTES = 1024 * 1024;

function tooLarge(cap: number): ProxyError {
  return new ProxyError(413, 'body-too-large', `The request body is larger than ${cap} bytes. Send less (or raise --max-body).`);
}

/**
 * Node's own requestTimeout does not cover a body that stops arriving once the
 * handler runs, so the body read has its own deadline (slowloris on the body).
 */
function armDeadline(ex: Exchange, timeoutMs: number): () => void {
  const timer = setTimeout(() => {
    const err = new ProxyError(408, 'body-timeout', `The request body did not arrive within ${Math.round(timeoutMs / 1000)} s. Send the whole body promptly.`);
    if (ex.reply.headersSent) {
      ex.reply.lost(err.statusCode, err.code, err.message);
      return void ex.req.destroy(err);
    }
    // Answer first, then drop the connection: the rest of the body will never be read.
    ex.reply.refuse(err, { close: true, onSent: () => ex.req.destroy(err) });
  }, Math.max(0, timeoutMs - (performance.now() - ex.startedAt)));
  timer.unref();
  return () => clearTimeout(timer);
}

export async function readBody(ex: Exchange, ctx: ProxyContext, holdAll: boolean): Promise<void> {
  const req = ex.req;
  const maxBytes = ctx.limits.maxBodyBytes;
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const disarm = armDeadline(ex, ctx.limits.requestTimeoutMs);
  try {
    await readInto(ex, ctx, maxBytes, holdAll, disarm);
  } catch (err) {
    disarm();
    throw err;
  }
}

async function readInto(ex: Exchange, ctx: ProxyContext, maxBytes: number, holdAll: boolean, disarm: () => void): Promise<void> {
  const hold = holdAll ? maxBytes : HOLD_BYTES;
  const { chunks, size, ended } = await readHeld(ex.req, hold, maxBytes);
  ex.bytesIn = size;
  if (!ended) {
    ex.bodyStream = continueStream(ex, chunks, ex.req[Symbol.asyncIterator]() as AsyncIterator<Buffer>, maxBytes, disarm);
    sniffMetadata(ex, chunks[0]!);
    return;
  }
  disarm();
  ex.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  parseMetadata(ex, ctx, ex.body);
}

/**
 * Reads until the end or past `hold` bytes (then leaves the request paused).
 * Plain events rather than an async iterator: this runs for every request.
 */
function readHeld(req: Exchange['req'], hold: number, maxBytes: number): Promise<{ chunks: Buffer[]; size: number; ended: boolean }> {
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
    const onClose = () => done(Object.assign(new Error('The request body ended early.'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }), false);
    if (req.readableEnded) return resolve({ chunks, size, ended: true });
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
  });
}

async function* continueStream(ex: Exchange, held: Buffer[], rest: AsyncIterator<Buffer>, maxBytes: number, disarm: () => void): AsyncGenerator<Buffer> {
  yield* held;
  held.length = 0;
  for (;;) {
    const next = await rest.next();
    if (next.done) {
      disarm();
      return;
    }
    ex.bytesIn += next.value.length;
    if (ex.bytesIn > maxBytes) throw tooLarge(maxBytes);
    streamedBytes(next.value.length);
    yield next.value;
  }
}

function parseMetadata(ex: Exchange, ctx: ProxyContext, body: Buffer): void {
  if (body.length === 0) {
    if (ex.req.method === 'POST') throw new ProxyError(400, 'empty-body', 'The request body is empty: send a JSON object with at least "model".');
    return;
  }
  // With OTLP export on, the values of the parameters the GenAI conventions name are read in the same pass.
  const top = scanTopLevel(body, ctx.otlp ? REQUEST_VALUE_KEYS : undefined);
  if (!top.ok) {
    throw new ProxyError(400, 'invalid-json', `The request body is not valid JSON (${top.reason}, at byte ${top.at}). Check the JSON and retry with the minimal request.`);
  }
  ex.params = top.keys;
  ex.model = top.model;
  ex.modelSpan = top.modelSpan;
  ex.stream = top.stream;
  ex.jsonDepth = top.depth;
  ex.jsonObject = true;
  ex.requestValues = top.picked;
}

/**
 * The bridge walks tool schemas and tool inputs recursively; no real request
 * nests anywhere near this deep, and a deeper one would exhaust the stack.
 */
export const MAX_BRIDGED_JSON_DEPTH = 200;

/** The held body as an object, parsed only when something needs all of it (the bridge). */
export function parsedBody(ex: Exchange): Record<string, unknown> {
  if (ex.parsedBody) return ex.parsedBody;
  if (!ex.body || !ex.jsonObject) throw new ProxyError(400, 'bridge-needs-json', 'The protocol bridge needs a JSON request body.');
  if ((ex.jsonDepth ?? 0) > MAX_BRIDGED_JSON_DEPTH) {
    throw new ProxyError(
      400,
      'body-too-deep',
      `The request body nests ${ex.jsonDepth} levels deep (objects and arrays); the protocol bridge takes at most ${MAX_BRIDGED_JSON_DEPTH}. Flatten the tool schema or tool input that nests this deep.`,
    );
  }
  try {
    ex.parsedBody = JSON.parse(ex.body.toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ProxyError(400, 'invalid-json', `The request body is not valid JSON (${(err as Error).message}). Check the JSON and retry with the minimal request.`);
  }
  return ex.parsedBody;
}

/** Large bodies are not parsed; a cheap look at the first chunk finds the usual fields. */
function sniffMetadata(ex: Exchange, first: Buffer): void {
  const head = first.subarray(0, 4096).toString('utf8');
  ex.model = /"model"\s*:\s*"([^"\\]{1,200})"/.exec(head)?.[1];
  ex.stream = /"stream"\s*:\s*true/.test(head);
}

