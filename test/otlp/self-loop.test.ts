// Issue 23 F-E: `serve --port P --otlp http://127.0.0.1:P` exported each
// export again, forever, and with http/json and --no-token the spans went on to
// the upstream's /v1/traces with the real key. Now: a collector address that is
// this proxy is refused at start (exit 3), by every way it can be given (--otlp,
// the OTEL_EXPORTER_OTLP_* variables, the editor's setting over IPC); and
// whatever address still leads an export to a Loopgate proxy, the exporter's
// marker header makes that proxy refuse it (508) and record no span for it.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startProxy, ProxyConfigError } from '../../proxy/server.js';
import { collectorLoop, otlpConfig } from '../../rules/otlp/otlp-config.js';
import { freePort, runCli } from '../cli/io.js';
import { ipcStartRefused } from '../cli/ipc-run.js';
import { KEYS, logRecords, startStack, until } from '../proxy/stack.js';
import { fastEnv, startReceiver } from './receiver.js';

function configFor(env: NodeJS.ProcessEnv, flags: Parameters<typeof otlpConfig>[1] = {}) {
  const r = otlpConfig(env, flags);
  if (!r.ok || !r.config) throw new Error(r.ok ? 'no config' : r.problem);
  return r.config;
}

const SELF_FORMS = (p: number) => [
  `http://127.0.0.1:${p}`,
  `http://localhost:${p}/any/path`,
  `http://[::1]:${p}`,
  `http://0.0.0.0:${p}/v1/traces`,
  `http://127.1:${p}`,
  `http://2130706433:${p}`,
  `http://[::ffff:127.0.0.1]:${p}`,
  `http://[::]:${p}`,
  `http://LOCALHOST:${p}`,
  `https://127.0.0.1:${p}`,
];

describe('a collector address that is this proxy', () => {
  it('is recognised in every spelling, and only at the proxy port', () => {
    for (const url of SELF_FORMS(8787))
      expect(collectorLoop(configFor({}, { endpoint: url }), '127.0.0.1', 8787), url).toMatch(
        /is this proxy itself \(port 8787\)/,
      );
    // The metrics endpoint alone counts too.
    expect(
      collectorLoop(
        configFor({
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces',
          OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://localhost:8787/v1/metrics',
        }),
        '127.0.0.1',
        8787,
      ),
    ).toBeDefined();
    // The proxy's own bind address (--allow-remote) too.
    expect(collectorLoop(configFor({}, { endpoint: 'http://192.0.2.7:8787' }), '192.0.2.7', 8787)).toBeDefined();
    for (const url of [
      'http://127.0.0.1:4318',
      'http://localhost:8788',
      'http://collector.example:8787',
      'http://192.0.2.7:8787',
      'http://127.0.0.1',
    ]) {
      expect(collectorLoop(configFor({}, { endpoint: url }), '127.0.0.1', 8787), url).toBeUndefined();
    }
    // Port 80 is the default of an http:// URL without one.
    expect(collectorLoop(configFor({}, { endpoint: 'http://localhost/' }), '127.0.0.1', 80)).toBeDefined();
  });

  it('startProxy refuses it before it listens (the port stays free)', async () => {
    const port = await freePort();
    for (const url of SELF_FORMS(port)) {
      const started = startProxy({
        upstream: 'http://127.0.0.1:9/v1',
        allowHttp: true,
        key: KEYS.default,
        token: null,
        port,
        logFile: false,
        otlp: configFor({}, { endpoint: url }),
      });
      await expect(started, url).rejects.toThrow(ProxyConfigError);
      await expect(started).rejects.toThrow(/is this proxy itself/);
    }
    const probe = createServer();
    await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise((r) => probe.close(r));
  });

  it('serve exits 3 for --otlp and for the OTEL_EXPORTER_OTLP_* variables, with --no-token too', async () => {
    const port = await freePort();
    const byFlag = await runCli(
      ['serve', '--port', String(port), '--no-log', '--no-token', '--otlp', `http://127.0.0.1:${port}`],
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    );
    expect(byFlag.code).toBe(3);
    expect(byFlag.err).toMatch(/the OTLP collector http:\/\/127\.0\.0\.1:\d+\/v1\/traces is this proxy itself/);
    const byEnv = await runCli(['serve', '--port', String(port), '--no-log'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://localhost:${port}/collector`,
    });
    expect(byEnv.code).toBe(3);
    const byTracesEnv = await runCli(['serve', '--port', String(port), '--no-log'], {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://[::1]:${port}/v1/traces`,
    });
    expect(byTracesEnv.code).toBe(3);
    expect(byTracesEnv.err).toMatch(/is this proxy itself/);
  });

  it("the editor's path (serve --ipc) refuses it as a configuration error", async () => {
    const port = await freePort();
    const { error, messages } = await ipcStartRefused(
      {
        port,
        logBodies: false,
        requireToken: false,
        otlp: { endpoint: `http://localhost:${port}`, content: false },
      },
      'lg-local-ipc-self-loop-0123456789abcdef',
    );
    expect(error.code).toBe('config');
    expect(error.message).toMatch(/is this proxy itself/);
    expect(messages.some((m) => m.kind === 'listening')).toBe(false);
  });
});

describe('an export that reaches a Loopgate proxy anyway', () => {
  it('is refused (508) and never forwarded upstream, even with --no-token and http/json; no span is made of it', async () => {
    const receiver = await startReceiver();
    // B: the proxy the export lands on, no token, its own spans going to a real collector.
    const b = await startStack({ token: null, otlp: configFor(fastEnv(receiver.url)) });
    // A: a proxy whose collector address leads to B (a name the start check cannot see through, say).
    const a = await startStack({
      token: null,
      otlp: configFor(fastEnv(b.proxy.url, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })),
    });
    try {
      const res = await a
        .openai()
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'to be exported' }] });
      expect(res.choices[0]!.message.content).toBeTruthy();
      // A's export reached B and was refused there.
      const refused = await until(
        () => logRecords(b.logFile).find((r) => r.status === 508),
        10_000,
        "B's refusal of A's export",
      );
      expect(refused).toMatchObject({ diagnosis: 'export-loop', method: 'POST' });
      await until(() => (a.proxy.otlp!().dropped > 0 ? true : undefined), 10_000, "A's export to fail");
      expect(a.proxy.otlp!().error).toMatch(/508/);
      // Nothing of it went to B's upstream (which holds the key).
      expect(b.sim.requests.filter((q) => !q.path.endsWith('/models'))).toEqual([]);
      // B's own spans still go out; none was made of the refusal (it would be exported, refused, recorded again …).
      const mine = await fetch(`${b.proxy.url}/v1/models`).then((r) => r.headers.get('x-loopgate-request-id'));
      await until(
        () => receiver.spans.find((s) => s.attributes['loopgate.request.id'] === mine),
        10_000,
        "B's span of its own request",
      );
      expect(receiver.spans.filter((s) => s.attributes['loopgate.request.id'] === refused.id)).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      await receiver.close();
    }
  });
});
