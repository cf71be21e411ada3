// The OTLP configuration from the standard variables and the flags (rules/otlp/otlp-config.ts, pure).
import { describe, expect, it } from 'vitest';
import { describeEndpoint, otlpConfig, parseOtlpHeaders, signalUrl } from '../../rules/otlp/otlp-config.js';
import { OTLP_DEFAULT_BATCH } from '../../core/otlp-options.js';

function config(env: NodeJS.ProcessEnv, flags = {}) {
  const r = otlpConfig(env, flags);
  if (!r.ok) throw new Error(r.problem);
  return r;
}

describe('otlpConfig', () => {
  it('sends nothing unless an endpoint is set', () => {
    expect(config({}).config).toBeUndefined();
    expect(config({ OTEL_EXPORTER_OTLP_HEADERS: 'a=b', OTEL_SERVICE_NAME: 'x' }).config).toBeUndefined();
  });

  it('adds /v1/traces and /v1/metrics to the base endpoint, as the spec says', () => {
    const c = config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).config!;
    expect(c.tracesUrl).toBe('http://collector:4318/v1/traces');
    expect(c.metricsUrl).toBe('http://collector:4318/v1/metrics');
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example/prefix/' }).config!.tracesUrl).toBe(
      'https://otel.example/prefix/v1/traces',
    );
    expect(signalUrl('http://h:1/a?x=1', 'traces')).toBe('http://h:1/a/v1/traces?x=1');
  });

  it('takes the traces endpoint as it is; no metrics then unless their own endpoint is set', () => {
    const c = config({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom/path' }).config!;
    expect(c.tracesUrl).toBe('http://c:4318/custom/path');
    expect(c.metricsUrl).toBeUndefined();
    const both = config({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:1/x',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m:2/y',
    }).config!;
    expect([both.tracesUrl, both.metricsUrl]).toEqual(['http://t:1/x', 'http://m:2/y']);
  });

  it('--otlp stands for the base endpoint, and a pasted traces URL is taken as meant', () => {
    expect(config({}, { endpoint: 'http://localhost:4318' }).config!.tracesUrl).toBe('http://localhost:4318/v1/traces');
    const pasted = config({}, { endpoint: 'http://localhost:4318/v1/traces' }).config!;
    expect(pasted.tracesUrl).toBe('http://localhost:4318/v1/traces');
    expect(pasted.metricsUrl).toBe('http://localhost:4318/v1/metrics');
    // The flag wins over the environment.
    expect(
      config({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://env:1/t' }, { endpoint: 'http://flag:2' }).config!.tracesUrl,
    ).toBe('http://flag:2/v1/traces');
  });

  it('protocol: http/protobuf by default, http/json on request, gRPC refused with what to use', () => {
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).config!.protocol).toBe('http/protobuf');
    expect(
      config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).config!
        .protocol,
    ).toBe('http/json');
    expect(
      config({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }).config!.protocol,
    ).toBe('http/protobuf');
    const grpc = otlpConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(grpc).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/grpc is not supported: use http\/protobuf/),
    });
  });

  it('headers: decoded, the traces ones added; a bad entry is named by position, never by value', () => {
    const c = config({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc123xyz,x-team=ml',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-extra=1',
    }).config!;
    expect(c.headers).toEqual({ authorization: 'Bearer abc123xyz', 'x-team': 'ml', 'x-extra': '1' });
    const bad = otlpConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c',
      OTEL_EXPORTER_OTLP_HEADERS: 'ok=1,secretvalue-without-key',
    });
    expect(bad).toEqual({ ok: false, problem: 'OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value' });
    expect(parseOtlpHeaders('bad name=1')).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/not a valid header name/),
    });
    expect(parseOtlpHeaders('a=%E0%A4%A')).toMatchObject({
      ok: false,
      problem: 'OTEL_EXPORTER_OTLP_HEADERS: entry 1 has a bad percent-encoding',
    });
    // The editor's headers replace the environment's.
    expect(
      config({ OTEL_EXPORTER_OTLP_HEADERS: 'env=1' }, { endpoint: 'https://c', headers: 'editor=2' }).config!.headers,
    ).toEqual({ editor: '2' });
  });

  it('warns when headers would cross the network in clear text', () => {
    expect(
      config({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.lan:4318',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=x',
      }).notes,
    ).toEqual([expect.stringMatching(/over plain http/)]);
    expect(
      config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=x' })
        .notes,
    ).toEqual([]);
    expect(
      config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.lan', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=x' })
        .notes,
    ).toEqual([]);
  });

  it('refuses user info and fragments in the URL, and other schemes', () => {
    const userinfo = otlpConfig({}, { endpoint: 'http://me:hunter2-secret@c:4318' });
    expect(userinfo.ok).toBe(false);
    expect(JSON.stringify(userinfo)).not.toContain('hunter2');
    expect(otlpConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c/#x' }).ok).toBe(false);
    expect(otlpConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://c:4317' }).ok).toBe(false);
    expect(otlpConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }).ok).toBe(false);
  });

  it('service name, resource attributes, content switch, batching and the off switches', () => {
    const c = config({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,deployment.environment.name=dev,team=a%2Cb',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '500',
    }).config!;
    expect(c.serviceName).toBe('from-resource');
    expect(c.resourceAttributes).toEqual({
      'service.name': 'from-resource',
      'deployment.environment.name': 'dev',
      team: 'a,b',
    });
    expect(c.captureContent).toBe(true);
    expect(c.batch).toEqual({
      ...OTLP_DEFAULT_BATCH,
      scheduledDelayMs: 50,
      maxQueueSize: 100,
      maxExportBatchSize: 100,
    });
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_SERVICE_NAME: 'svc' }).config!.serviceName).toBe(
      'svc',
    );
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' }).config!).toMatchObject({
      serviceName: 'loopgate',
      captureContent: false,
    });
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' }, { content: true }).config!.captureContent).toBe(true);
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_SDK_DISABLED: 'true' }).config).toBeUndefined();
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_TRACES_EXPORTER: 'none' }).config).toBeUndefined();
    expect(
      config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_METRICS_EXPORTER: 'none' }).config!.metricsUrl,
    ).toBeUndefined();
  });

  it('describes an endpoint without user info or query', () => {
    expect(describeEndpoint('https://u:p@c.example:4318/v1/traces?api_key=abc')).toBe(
      'https://c.example:4318/v1/traces',
    );
  });
});
