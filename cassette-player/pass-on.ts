// --on-miss record|simulate (issue 34): a miss, and every /models call, sent on unchanged to where misses go.
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CASSETTE_HEADER } from '../core/cassette.js';
import type { RecordedModel } from './recordings.js';

/** A miss sent on as it came, to `siteUrl`; `onAnswer` gets the upstream's answer, and a failure either way ends both. */
function sendOn(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  siteUrl: string,
  onAnswer: (up: IncomingMessage) => void,
): void {
  const site = new URL(siteUrl);
  const target = new URL(req.url ?? '/', site.origin);
  const headers = { ...req.headers, host: site.host, 'content-length': String(body.length) };
  delete headers['transfer-encoding'];
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const out = send(target, { method: req.method, headers }, onAnswer);
  out.on('error', () => res.destroy());
  res.on('close', () => out.destroy());
  out.end(body);
}

/** A miss passed on; the answer streams back as it arrives (its timing is the upstream's). */
export function passOn(req: IncomingMessage, res: ServerResponse, body: Buffer, siteUrl: string): void {
  sendOn(req, res, body, siteUrl, (up) => {
    res.writeHead(up.statusCode ?? 502, { ...up.headers, [CASSETTE_HEADER]: 'passed' });
    up.pipe(res);
  });
}

/** The upstream's model list with the recorded models it lacks added; any other answer (a refused key) as it came. */
export function passModels(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  siteUrl: string,
  added: (listed: ReadonlySet<unknown>) => RecordedModel[],
): void {
  sendOn(req, res, body, siteUrl, (up) => {
    const chunks: Buffer[] = [];
    up.on('data', (c: Buffer) => chunks.push(c));
    up.on('error', () => res.destroy());
    up.on('end', () => answerModels(res, up, Buffer.concat(chunks), added));
  });
}

function answerModels(
  res: ServerResponse,
  up: IncomingMessage,
  raw: Buffer,
  added: (listed: ReadonlySet<unknown>) => RecordedModel[],
): void {
  const list = modelList(up, raw);
  if (up.statusCode !== 200 || !list) {
    res.writeHead(up.statusCode ?? 502, { ...up.headers, [CASSETTE_HEADER]: 'passed' });
    return void res.end(raw);
  }
  const listed = new Set(list.data.map((m) => (m as { id?: unknown }).id));
  const merged = JSON.stringify({ ...list, data: [...list.data, ...added(listed)] });
  const { 'content-length': _length, 'transfer-encoding': _te, ...rest } = up.headers;
  res.writeHead(200, {
    ...rest,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(merged)),
    [CASSETTE_HEADER]: 'models',
  });
  res.end(merged);
}

/** The upstream's answer as a model list, undefined when it is not one (compressed, not JSON, no `data` array). */
function modelList(up: IncomingMessage, raw: Buffer): { data: unknown[] } | undefined {
  let list: { data?: unknown } | undefined;
  try {
    list = up.headers['content-encoding'] ? undefined : (JSON.parse(raw.toString('utf8')) as { data?: unknown });
  } catch {
    list = undefined;
  }
  return list && Array.isArray(list.data) ? (list as { data: unknown[] }) : undefined;
}
