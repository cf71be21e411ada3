// Loopgate's protobuf encoder for spans (proxy/otlp/span-encoder.ts) against
// the official one (@opentelemetry/otlp-transformer's ProtobufTraceSerializer):
// both decoded with the official definitions, the messages must be equal, field
// for field, for every kind of value a span can carry.
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { encodeTraceRequest } from '../../proxy/otlp/span-encoder.js';

const require = createRequire(join(process.cwd(), 'package.json'));

const Request = (require('otlp-proto-official/build/src/generated/root.js') as any).opentelemetry.proto.collector.trace
  .v1.ExportTraceServiceRequest;
const decode = (bytes: Uint8Array) =>
  Request.toObject(Request.decode(bytes), {
    longs: String,
    enums: Number,
    bytes: String,
    defaults: true,
    arrays: true,
  });

const resource = resourceFromAttributes({
  'service.name': 'loopgate',
  'service.version': '1.2.3',
  team: 'ünïcødé ✓',
  n: 7,
});
const other = resourceFromAttributes({ 'service.name': 'other' });
// One scope object for every span, as the SDK (and Loopgate) hand them over.
const scope = { name: 'loopgate', version: '0.1.0' };

function span(i: number, extra: Partial<ReadableSpan> = {}): ReadableSpan {
  const ctx = {
    traceId: `${'0'.repeat(30)}${(i + 16).toString(16)}`.slice(-32),
    spanId: `00f067aa0ba9${(4096 + i).toString(16)}`.slice(-16),
    traceFlags: TraceFlags.SAMPLED,
  };
  return {
    name: `chat model-${i}`,
    kind: SpanKind.CLIENT,
    spanContext: () => ctx,
    parentSpanContext: undefined,
    startTime: [1764064800, 123456789],
    endTime: [1764064801, 5],
    duration: [0, 881543216],
    status: { code: SpanStatusCode.UNSET },
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.temperature': 0.7,
      'gen_ai.usage.input_tokens': 1234567,
      'big.int': 2 ** 40,
      'negative.int': -5,
      'negative.double': -0.25,
      'a.bool': true,
      'false.bool': false,
      'empty.string': '',
      'utf8.string': 'naïve — 日本語 — 🚀',
      'gen_ai.response.finish_reasons': ['stop', 'length'],
      numbers: [1, 2.5, -3],
      'long.value': 'x'.repeat(70_000),
    },
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    ...extra,
  };
}

describe('span encoder', () => {
  it('encodes exactly what the official encoder does (decoded with the official definitions)', () => {
    const spans = [
      span(1),
      span(2, {
        status: { code: SpanStatusCode.ERROR, message: 'model_not_found (model-not-found)' },
        events: [
          {
            name: 'loopgate.diagnosis',
            time: [1764064801, 0],
            attributes: { 'loopgate.diagnosis': 'model-not-found', 'loopgate.hint': 'did you mean…' },
          },
        ],
      }),
      span(3, {
        parentSpanContext: {
          traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
          spanId: '00f067aa0ba902b7',
          traceFlags: TraceFlags.SAMPLED,
          isRemote: true,
        },
        kind: SpanKind.SERVER,
      }),
      span(4, { resource: other }),
      span(5, { instrumentationScope: { name: 'other-scope' } }),
    ];
    const ours = decode(encodeTraceRequest(spans));
    const official = decode(ProtobufTraceSerializer.serializeRequest(spans)!);
    expect(ours).toEqual(official);
    expect(ours.resourceSpans).toHaveLength(2);
    expect(ours.resourceSpans[0].scopeSpans).toHaveLength(2);
  });

  it('encodes a batch of 512 spans the same way too', () => {
    const spans = Array.from({ length: 512 }, (_, i) =>
      span(i, {
        attributes: { 'loopgate.request.id': `req-${i}`, 'gen_ai.usage.output_tokens': i, 'loopgate.ttfb_ms': i / 7 },
      }),
    );
    expect(decode(encodeTraceRequest(spans))).toEqual(decode(ProtobufTraceSerializer.serializeRequest(spans)!));
  });
});
