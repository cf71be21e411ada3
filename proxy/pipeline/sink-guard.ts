// Every place finish() sends a request (the log, the OTLP span, the ring, the
// session book, the recorder, the console line) and the building of its record
// run here, in the response's close handler, where a throw would end the proxy
// with every stream it carries (issue 39 H-1). A throw is caught, counted in the
// stats (`sinkErrors`, by sink), said once, and named in the request's own
// record when that record is still to be sent anywhere.
import type { SinkName, TrafficRecord } from '../../core/record.js';
import { LOCAL_PATHS } from '../../core/local-api.js';
import type { ProxyContext } from './context.js';

const SINK_WORDS: Record<SinkName, string> = {
  close: "a request's close handler",
  record: "building a request's record",
  log: 'the traffic log',
  otlp: 'the OTLP export',
  ring: 'the traffic ring',
  sessions: 'the session book',
  budgets: 'the budget book',
  recorder: 'the cassette recorder',
  console: 'the console line',
};

/**
 * Runs one sink: what it returns, or undefined when it threw. `records`: the request's record (and the ring's
 * copy of it, when that is another object), each told which sink failed.
 */
export function runSink<T>(
  ctx: Pick<ProxyContext, 'stats' | 'hintOnce'>,
  sink: SinkName,
  records: ReadonlyArray<TrafficRecord | undefined>,
  run: () => T,
): T | undefined {
  try {
    return run();
  } catch (err) {
    const counts = (ctx.stats.sinkErrors ??= {});
    counts[sink] = (counts[sink] ?? 0) + 1;
    for (const r of records) if (r && !r.sinkErrors?.includes(sink)) (r.sinkErrors ??= []).push(sink);
    const why = err instanceof Error ? `${err.name}: ${err.message.slice(0, 160)}` : 'a non-Error value thrown';
    try {
      ctx.hintOnce(
        `sink-failed:${sink}`,
        `Loopgate: ${SINK_WORDS[sink]} failed (${why}); requests still go through. ${LOCAL_PATHS.stats} counts such failures under sinkErrors, and the request's record lists them.`,
      );
    } catch {
      // The hint's own destination failing is counted above already.
    }
    return undefined;
  }
}
