// `loopgate serve --otlp` as a user runs it: the banner names the collector
// (never its headers), a dead collector is said once on the console while
// requests keep working, and bad configuration has its exit codes.
import { afterAll, describe, expect, it } from 'vitest';
import { exited, runCli, spawnCli, tempHome } from '../cli/io.js';
import { until } from '../proxy/stack.js';
import { deadEndpoint } from './receiver.js';

const HEADER = 'serve-cli-collector-secret-2718281828';

describe('loopgate serve --otlp', () => {
  const home = tempHome();
  let stop: (() => Promise<void>) | undefined;
  afterAll(async () => stop?.());

  it('names the collector in the banner, says once that it is down, and keeps serving', async () => {
    const dead = await deadEndpoint();
    const { child, lines } = await spawnCli(
      ['serve', '--port', '0', '--no-token', '--otlp', `${dead}?tenant=abc`],
      {
        LOOPGATE_HOME: home,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${HEADER}`,
        OTEL_EXPORTER_OTLP_TIMEOUT: '200',
        OTEL_BSP_SCHEDULE_DELAY: '10',
      },
      /^\s+curl -s (\S+)/,
    );
    stop = async () => {
      child.kill('SIGTERM');
      expect(await exited(child)).toBe(0);
    };
    const text = lines.join('\n');
    expect(text).toContain(`  OTLP export        ${dead}/v1/traces (http/protobuf, metrics too, content off)`);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)![1]!;
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `n${i}` }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
    }
    await until(() => lines.find((l) => l.startsWith('OTLP export: cannot send spans')), 10_000, 'the console line');
    const health = (await (await fetch(`${url}/_loopgate/health`)).json()) as { otlp: { ok: boolean } };
    expect(health.otlp.ok).toBe(false);
    expect(lines.filter((l) => l.startsWith('OTLP export:'))).toHaveLength(1);
    const all = lines.join('\n') + JSON.stringify(health);
    expect(all).not.toContain(HEADER);
    expect(all).not.toContain('tenant=abc');
  });

  it('exit 2 for --otlp-content without a collector, exit 3 for a URL with user info or an unknown protocol', async () => {
    const content = await runCli(['serve', '--port', '0', '--no-log', '--otlp-content']);
    expect(content.code).toBe(2);
    expect(content.err).toMatch(/--otlp-content needs a collector/);
    const userinfo = await runCli([
      'serve',
      '--port',
      '0',
      '--no-log',
      '--otlp',
      'https://me:top-secret-pw@collector.example',
    ]);
    expect(userinfo.code).toBe(3);
    expect(userinfo.err).not.toContain('top-secret-pw');
    const grpc = await runCli(['serve', '--port', '0', '--no-log'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    expect(grpc.code).toBe(3);
    expect(grpc.err).toMatch(/grpc is not supported/);
    const badHeaders = await runCli(['serve', '--port', '0', '--no-log'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_HEADERS: `${HEADER}`,
    });
    expect(badHeaders.code).toBe(3);
    expect(badHeaders.err).toBe('loopgate serve: OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not key=value');
  });
});
