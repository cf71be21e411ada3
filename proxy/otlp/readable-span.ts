// A finished span as the SDK's processor and exporters read it. Built directly
// rather than through a Tracer: the request is over, every value is known and
// of a valid type, and the Tracer's path (sampler, three copies and checks of
// the attributes, a live Span) measured 10–15 µs a span against about 1 µs here.
// Every request is recorded, whatever the caller's sampling flag says: the team sees all traffic.
import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import { RandomIdGenerator, type ReadableSpan } from '@opentelemetry/sdk-trace';
import type { SpanData } from '../../rules/otlp/genai-span.js';

/** Milliseconds (since the epoch, fractional) as the SDK's [seconds, nanoseconds]. */
function hrTime(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** Builds each span of one resource and instrumentation scope. */
export function spanBuilder(
  resource: Resource,
  scope: { name: string; version: string },
): (span: SpanData) => ReadableSpan {
  const ids = new RandomIdGenerator();
  return (span) => {
    const context = {
      traceId: span.parent?.traceId ?? ids.generateTraceId(),
      spanId: ids.generateSpanId(),
      traceFlags: TraceFlags.SAMPLED,
    };
    return {
      name: span.name,
      kind: SpanKind.CLIENT,
      spanContext: () => context,
      parentSpanContext: span.parent
        ? {
            traceId: span.parent.traceId,
            spanId: span.parent.spanId,
            traceFlags: span.parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
            isRemote: true,
          }
        : undefined,
      startTime: hrTime(span.startMs),
      endTime: hrTime(span.endMs),
      duration: hrTime(span.endMs - span.startMs),
      status:
        span.error !== undefined ? { code: SpanStatusCode.ERROR, message: span.error } : { code: SpanStatusCode.UNSET },
      attributes: span.attributes,
      links: [],
      events: span.events.map((e) => ({
        name: e.name,
        time: hrTime(e.timeMs),
        attributes: e.attributes,
        droppedAttributesCount: 0,
      })),
      ended: true,
      resource,
      instrumentationScope: scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  };
}
