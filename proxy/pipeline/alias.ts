// Model aliases in the request path (the rules are in rules/keys/model-aliases.ts):
// a request for FROM goes out as TO. It runs right after the body is read and
// before the key is chosen, so routing, the bridge and the diagnoses all see
// the served model. The answer is relayed as the upstream wrote it (its
// `model` says TO); x-loopgate-alias and the record say both.
// Also: the advice a 404 for an unserved model gets, the count `loopgate run`
// reads, and the alias entries of /v1/models.
import { aliasAdvice, rewriteModelValue, withAliasEntries } from '../../rules/keys/model-aliases.js';
import { parseModelList } from '../../rules/wire/model-list.js';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { suggestModels } from '../../rules/addresses/suggest.js';
import type { ProxyContext } from './context.js';
import type { AliasFacts, BodyFacts, RequestSoFar } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import { StreamedBody } from './read-body.js';
import { answeringAttempt } from './build-record.js';

/** When an alias names the request's `model`: the alias, and the body rewritten to ask for its target. */
export function applyAlias(
  body: BodyFacts,
  ctx: Pick<ProxyContext, 'aliases'>,
): { body: BodyFacts; alias: AliasFacts } | undefined {
  const from = body.model;
  if (from === undefined || ctx.aliases.size === 0) return undefined;
  const alias = ctx.aliases.get(from);
  if (!alias) return undefined;
  let rewritten: BodyFacts;
  if (body.body && body.modelSpan) {
    const held = rewriteModelValue(body.body, body.modelSpan, alias.to);
    // bytesIn stays what the client sent.
    rewritten = { ...body, body: held, modelSpan: undefined, model: alias.to };
  } else if (body instanceof StreamedBody) {
    // A body too large to hold: its model was read from the first chunk (read-body.ts sniffMetadata), and is rewritten there.
    rewritten = body.withStream(rewriteFirstChunk(body.bodyStream, from, alias.to), alias.to);
  } else return undefined;
  return { body: rewritten, alias: { from, to: alias.to } };
}

const SNIFFED_MODEL = /"model"\s*:\s*"([^"\\]{1,200})"/;

async function* rewriteFirstChunk(stream: AsyncIterable<Buffer>, from: string, to: string): AsyncGenerator<Buffer> {
  let first = true;
  for await (const chunk of stream) {
    if (!first) {
      yield chunk;
      continue;
    }
    first = false;
    // latin1: one character per byte, so the match's index is a byte offset (alias IDs are ASCII).
    const m = SNIFFED_MODEL.exec(chunk.subarray(0, 4096).toString('latin1'));
    if (!m || m[1] !== from) {
      yield chunk;
      continue;
    }
    const start = m.index + m[0].length - from.length - 2;
    yield rewriteModelValue(chunk, [start, start + from.length + 2], to);
  }
}

/** The "No key of this proxy lists model X; closest: Y" refusal, with the alias that would serve it. */
export function withAliasAdvice(
  err: unknown,
  model: string | undefined,
  alias: AliasFacts | undefined,
  ctx: Pick<ProxyContext, 'keys'>,
): unknown {
  if (!(err instanceof ProxyError) || err.code !== 'model-not-found' || !model) return err;
  const closest = suggestModels(model, ctx.keys.ids() ?? [])[0];
  if (!closest) return err;
  return new ProxyError(
    err.statusCode,
    err.code,
    `${err.message} ${aliasAdvice(alias?.from ?? model, closest, alias?.to)}`,
    err.headers,
    { param: err.param, cause: err.cause },
  );
}

/**
 * Counts answers that said a model is not served (Loopgate's own 404 or the
 * upstream's model_not_found), with the alias that would help: `loopgate run`
 * reads it from /_loopgate/stats to give the hint once when its tool exits.
 */
export function noteModelNotFound(
  ex: RequestSoFar,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'keys' | 'stats' | 'redactor'>,
): void {
  const local = reply.local;
  const notFound = local
    ? local.refused && local.code === 'model-not-found'
    : answeringAttempt(ex, reply)?.diagnosis?.code === 'model-not-found';
  const served = ex.body?.model;
  if (!notFound || !served) return;
  const model = ex.alias?.from ?? served;
  const closest = suggestModels(served, ctx.keys.ids() ?? [])[0];
  const previous = ctx.stats.modelNotFound?.count ?? 0;
  // Client-chosen text kept in memory and served back: bounded like the console's quotes.
  ctx.stats.modelNotFound = {
    count: previous + 1,
    model: ctx.redactor.string(model).slice(0, 200),
    ...(closest ? { closest } : {}),
    ...(ex.alias ? { aliasedTo: ex.alias.to } : {}),
  };
}

/** GET /v1/models with several keys and aliases: the union of the keys' lists, with the aliases marked. */
export async function answerAliasedModelUnion(
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'keys' | 'aliases'>,
): Promise<void> {
  if (ctx.keys.slots.some((s) => s.models.ids() === undefined)) await ctx.keys.refresh();
  reply.answer(
    200,
    'application/json',
    JSON.stringify({ object: 'list', data: withAliasEntries(ctx.keys.union(), ctx.aliases) }),
  );
}

/** One key's /v1/models answer with the aliases marked; a body that is not a model list is left alone. */
export function aliasedModelList(body: Buffer, ctx: Pick<ProxyContext, 'aliases'>): Buffer {
  if (ctx.aliases.size === 0) return body;
  const text = body.toString('utf8');
  const list = parseModelList(text);
  if (!list.ok) return body;
  const top = JSON.parse(text) as Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...top, data: withAliasEntries(list.models, ctx.aliases) }));
}
