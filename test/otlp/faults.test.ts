// A collector that is down, answers 500 or 429, or stalls: the proxy keeps
// serving every request, counts the spans it loses, shows them in
// /_loopgate/health, and says so once (and once more when export works again).
// The console line names the collector's URL and the status, never a header value.
import { describe, expect, it } from 'vitest';
import { otlpConfig } from '../../rules/otlp/otlp-config.js';
import type { OtlpHealth } from '../../core/health.js';
import { describeOtlpHealth } from '../../proxy/otlp/export-health.js';
import { startStack, TOKEN, until, type Stack } from '../proxy/stack.js';
import { deadEndpoint, fastEnv, startReceiver, type Receiver, type ReceiverMode } from './receiver.js';
import { closedAfterEach } from '../kit/lifecycle.js';

const HEADER_SECRET = 'otlp-header-secret-0123456789';

let stack: Stack | undefined;
let receiver: Receiver | undefined;
const closing = closedAfterEach();

async function startWith(endpoint: string, extra: Record<string, string> = {}): Promise<{ health: OtlpHealth[] }> {
  const r = otlpConfig(
    fastEnv(endpoint, {
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${HEADER_SECRET}`,
      OTEL_METRICS_EXPORTER: 'none',
      ...extra,
    }),
  );
  if (!r.ok || !r.config) throw new Error('no config');
  const health: OtlpHealth[] = [];
  stack = closing(await startStack({ otlp: r.config, onOtlpHealth: (h) => health.push(h) }));
  return { health };
}

/** `n` chat requests, `parallel` at a time; every one must succeed. */
async function load(n: number, parallel = 8): Promise<void> {
  const one = async (i: number) => {
    const res = await fetch(`${stack!.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `fault ${i}` }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
  };
  for (let i = 0; i < n; i += parallel)
    await Promise.all(Array.from({ length: Math.min(parallel, n - i) }, (_, k) => one(i + k)));
}

async function healthOf(): Promise<OtlpHealth> {
  const h = await (
    await fetch(`${stack!.proxy.url}/_loopgate/health`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).json();
  return (h as { otlp: OtlpHealth }).otlp;
}

function noSecret(texts: string[]): void {
  for (const t of texts) expect(t).not.toContain(HEADER_SECRET);
}

describe('a collector that is down', () => {
  it('costs nothing but the spans: every request served, every span counted as dropped, one console line', async () => {
    const endpoint = await deadEndpoint();
    const { health } = await startWith(endpoint);
    await load(60);
    await until(() => (stack!.proxy.otlp!().dropped >= 60 ? true : undefined), 10_000, 'the drops to be counted');
    const seen = await healthOf();
    expect(seen).toMatchObject({ ok: false, exported: 0, endpoint: `${endpoint}/v1/traces` });
    expect(seen.dropped).toBeGreaterThanOrEqual(60);
    expect(seen.error).toMatch(new RegExp(`^${endpoint}/v1/traces: ECONNREFUSED`));
    // Once, however many spans are lost.
    expect(health).toHaveLength(1);
    const line = describeOtlpHealth(health[0]!);
    expect(line).toMatch(
      /OTLP export: cannot send spans to http:\/\/127\.0\.0\.1:\d+\/v1\/traces: ECONNREFUSED; spans are being dropped .*requests are still served/,
    );
    noSecret([line, JSON.stringify(seen), ...stack!.traffic, ...stack!.hints]);
  });
});

describe.each<[ReceiverMode, RegExp]>([
  ['500', /HTTP 500/],
  ['429', /refused|timed out|HTTP 429/],
  ['stall', /timed out|not keeping up/],
])('a collector that answers %s', (mode, why) => {
  it('serves every request, counts the dropped spans, reports once, and recovers once the collector works again', async () => {
    receiver = closing(await startReceiver(mode));
    const { health } = await startWith(receiver.url);
    await load(40);
    await until(() => (health.length >= 1 ? true : undefined), 10_000, 'the failure report');
    await until(() => (stack!.proxy.otlp!().dropped >= 1 ? true : undefined), 10_000, 'drops counted');
    const failing = await healthOf();
    expect(failing.ok).toBe(false);
    expect(failing.error).toMatch(why);
    expect(receiver.requests.length).toBeGreaterThan(0);
    // The headers reached the collector, and nothing else of them anywhere.
    expect(receiver.requests[0]!.headers.authorization).toBe(`Bearer ${HEADER_SECRET}`);
    noSecret([describeOtlpHealth(health[0]!), JSON.stringify(failing), ...stack!.traffic, ...stack!.hints]);

    // The collector comes back: spans flow again, and that is said once.
    receiver.mode = 'ok';
    const before = receiver.spans.length;
    await load(8);
    await until(() => (health.length >= 2 ? true : undefined), 15_000, 'the recovery report');
    expect(health[1]!.ok).toBe(true);
    expect(describeOtlpHealth(health[1]!)).toMatch(
      /OTLP export: sending spans to .* again \(\d+ span\(s\) dropped while it failed\)/,
    );
    await until(() => (receiver!.spans.length > before ? true : undefined), 10_000, 'spans after the recovery');
    expect(health).toHaveLength(2);
    expect(receiver.errors).toEqual([]);
  });
});

describe('a collector too slow for the traffic', () => {
  it('drops what does not fit the bounded queue, counts it, and keeps serving', async () => {
    receiver = closing(await startReceiver('stall'));
    const { health } = await startWith(receiver.url, {
      OTEL_BSP_MAX_QUEUE_SIZE: '16',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8',
      OTEL_EXPORTER_OTLP_TIMEOUT: '30000',
    });
    await load(80);
    await until(() => (stack!.proxy.otlp!().dropped >= 40 ? true : undefined), 10_000, 'the overflow to be counted');
    expect(health[0]!.ok).toBe(false);
    expect(health[0]!.error).toMatch(/not keeping up \(queue of 16 spans full\)/);
    expect(health).toHaveLength(1);
  });
});
