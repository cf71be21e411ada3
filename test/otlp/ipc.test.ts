// The editor's path: `loopgate serve --ipc` forked the way the extension forks
// it (extension/child-env.ts), the collector's endpoint from its setting and the
// headers from SecretStorage in the start message. The headers reach the
// collector and nowhere else: not the child's argv, not its environment, not
// its traffic lines; an OTEL_* variable in the editor's environment decides nothing.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv } from '../../extension/child-env.js';
import type { FromProxy, ToProxy } from '../../core/ipc.js';
import { CLI, tempHome } from '../cli/io.js';
import { ipcStartRefused } from '../cli/ipc-run.js';
import { until } from '../proxy/stack.js';
import { deadEndpoint, startReceiver, type Receiver } from './receiver.js';

const HEADER = 'ipc-collector-secret-31415926535';
const TOKEN = 'lg-local-ipc-test-token-0123456789abcdef';

describe('serve --ipc with an OTLP endpoint from the editor', () => {
  let child: ChildProcess | undefined;
  let receiver: Receiver | undefined;
  afterAll(async () => {
    child?.kill('SIGKILL');
    await receiver?.close();
  });

  it('exports to the configured collector with the headers from the start message, and keeps them out of argv, env and lines', async () => {
    receiver = await startReceiver();
    const decoy = await deadEndpoint();
    // The editor's own environment points elsewhere, with a header of its own: ignored.
    const parentEnv = {
      ...process.env,
      LOOPGATE_HOME: tempHome(),
      OTEL_EXPORTER_OTLP_ENDPOINT: decoy,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-decoy=from-the-editor-env',
      OTEL_BSP_SCHEDULE_DELAY: '10',
    };
    child = fork(CLI, ['serve', '--ipc'], { env: childEnv(parentEnv), stdio: ['pipe', 'pipe', 'pipe', 'ipc'] });
    const messages: FromProxy[] = [];
    child.on('message', (m) => messages.push(m as FromProxy));
    const start: ToProxy = {
      kind: 'start',
      config: {
        port: 0,
        logBodies: false,
        requireToken: true,
        logFile: undefined,
        otlp: { endpoint: receiver.url, content: false },
      },
      token: TOKEN,
      otlpHeaders: `authorization=Bearer%20${HEADER}`,
    };
    child.send(start);
    const listening = await until(
      () => messages.find((m): m is Extract<FromProxy, { kind: 'listening' }> => m.kind === 'listening'),
      15_000,
      'the proxy to listen',
    );
    const res = await fetch(`${listening.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'from the editor' }] }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-loopgate-request-id');
    const span = await until(
      () => receiver!.spans.find((s) => s.attributes['loopgate.request.id'] === id),
      10_000,
      'the span',
    );
    expect(span.attributes['gen_ai.operation.name']).toBe('chat');
    const traces = receiver.requests.find((q) => q.path === '/v1/traces')!;
    expect(traces.headers.authorization).toBe(`Bearer ${HEADER}`);
    expect(traces.headers['x-decoy']).toBeUndefined();

    const pid = child.pid!;
    if (existsSync(`/proc/${pid}/environ`)) {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
      expect(environ).not.toContain(HEADER);
      expect(environ).not.toMatch(/(^|\0)OTEL_/);
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(HEADER);
    }
    expect(JSON.stringify(messages)).not.toContain(HEADER);
    child.send({ kind: 'stop' } satisfies ToProxy);
    await until(() => messages.find((m) => m.kind === 'stopped'), 10_000, 'the proxy to stop');
  });

  it('refuses an endpoint with user info as a configuration error, naming the setting and not the password', async () => {
    const { error } = await ipcStartRefused(
      {
        port: 0,
        logBodies: false,
        requireToken: true,
        otlp: { endpoint: 'https://team:pa55word-xyz@collector.example:4318', content: false },
      },
      TOKEN,
    );
    expect(error.code).toBe('config');
    expect(error.message).toMatch(/^loopgate\.otlp\.endpoint: .*carries user info/);
    expect(error.message).not.toContain('pa55word');
  });
});
