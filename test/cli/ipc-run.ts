// `loopgate serve --ipc`, the built CLI forked as the extension forks it (extension/child-env.ts), started with
// one `start` message: the messages it sends back, and the address it listens on once it says so.
import { fork, type ChildProcess } from 'node:child_process';
import { afterAll, expect } from 'vitest';
import { childEnv } from '../../extension/child-env.js';
import type { FromProxy, ToProxy } from '../../core/ipc.js';
import { CLI, tempHome } from './io.js';
import { until } from '../proxy/stack.js';

type StartConfig = Extract<ToProxy, { kind: 'start' }>['config'];

/** The built CLI as `serve --ipc`, sent its `start` message: the child and every message it sends back. */
function forkWithStart(config: StartConfig, token: string): { child: ChildProcess; messages: FromProxy[] } {
  const child = fork(CLI, ['serve', '--ipc'], {
    env: childEnv({ ...process.env, LOOPGATE_HOME: tempHome() }),
    stdio: ['pipe', 'pipe', 'pipe', 'ipc'],
  });
  const messages: FromProxy[] = [];
  child.on('message', (m) => messages.push(m as FromProxy));
  const start: ToProxy = { kind: 'start', config, token };
  child.send(start);
  return { child, messages };
}

export async function forkIpcServe(
  config: StartConfig,
  token: string,
): Promise<{ child: ChildProcess; messages: FromProxy[]; listening: Extract<FromProxy, { kind: 'listening' }> }> {
  const { child, messages } = forkWithStart(config, token);
  const listening = await until(
    () => messages.find((m): m is Extract<FromProxy, { kind: 'listening' }> => m.kind === 'listening'),
    15_000,
    'the proxy to listen',
  );
  return { child, messages, listening };
}

/** A start the proxy must refuse: its `error` message and all it sent before; the child is killed either way. */
export async function ipcStartRefused(
  config: StartConfig,
  token: string,
): Promise<{ error: Extract<FromProxy, { kind: 'error' }>; messages: FromProxy[] }> {
  const { child, messages } = forkWithStart(config, token);
  try {
    const error = await until(
      () => messages.find((m): m is Extract<FromProxy, { kind: 'error' }> => m.kind === 'error'),
      15_000,
      'the refusal',
    );
    return { error, messages };
  } finally {
    child.kill('SIGKILL');
  }
}

/** forkIpcServe for one describe block: the child it forks is killed after the block's tests. */
export function ipcServeForSuite(): typeof forkIpcServe {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
  });
  return async (config, token) => {
    const started = await forkIpcServe(config, token);
    child = started.child;
    return started;
  };
}

/** The start messages about aliases: the refused `broken=broken` as a hint, each usable alias as a message of its own kind. */
export function expectAliasMessages(messages: FromProxy[], aliases: string[]): void {
  expect(messages).toContainEqual({
    kind: 'hint',
    text: 'loopgate.aliases: "broken=broken" maps a model to itself; leave it out.',
  });
  for (const text of aliases) expect(messages).toContainEqual({ kind: 'alias', text });
}
