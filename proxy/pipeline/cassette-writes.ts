// serve --record: an exchange, or the proxy's own /models answer, into the cassette. Both run where a throw would
// end the proxy (the response's close handler, the list fetch's callback): a failed write is said and counted.
import type { TrafficRecord } from '../../core/record.js';
import type { ProxyContext } from './context.js';
import type { ListAnswer } from './models-cache.js';

/**
 * Adds the exchange to the cassette. A write that fails (the folder gone or turned into a file, a full disk, no
 * permission) is said once and counted as left out: it runs in the response's close handler, where a throw would
 * end the proxy.
 */
export function recordExchange(
  ctx: Pick<ProxyContext, 'recorder' | 'hintOnce'>,
  rec: TrafficRecord,
  entry: Parameters<NonNullable<ProxyContext['recorder']>['add']>[1],
): void {
  recording(ctx, rec.id, () => ctx.recorder!.add(rec, entry));
}

/**
 * The proxy's own /models answer into the cassette, redacted as the ring redacts traffic (a list is not traffic,
 * so it never went through the ring). Runs in the list fetch's callback: a failure is said, never thrown.
 */
export function recordList(
  ctx: Pick<ProxyContext, 'recorder' | 'hintOnce' | 'redactor'>,
  path: string,
  answer: ListAnswer,
): void {
  recording(ctx, `GET ${path}`, () =>
    ctx.recorder!.addList(path, {
      status: answer.status,
      headers: ctx.redactor.headers(answer.headers),
      text: ctx.redactor.string(answer.text),
    }),
  );
}

function recording(ctx: Pick<ProxyContext, 'recorder' | 'hintOnce'>, id: string, write: () => unknown): void {
  try {
    write();
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    ctx.recorder!.skipped.push({ id, reason: `the cassette file could not be written (${why})` });
    ctx.hintOnce(
      `record-failed:${why}`,
      `--record: cannot write into ${ctx.recorder!.dir} (${why}); requests still go through, unrecorded. Check the folder.`,
    );
  }
}
