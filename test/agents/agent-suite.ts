// What every agent suite asserts the same way: a run that exited 0 (or shows
// why not), the records a case produced, and the closing check that every
// request is in the traffic logs and no key or token is in any log, console
// line or the tool's own output.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { assertNoCanary } from '../log/canary.js';
import { logRecords, until } from '../proxy/stack.js';
import type { RunningProxy } from '../../proxy/server.js';
import type { AgentRun } from './agent-binaries.js';

/**
 * What the proxy-side assertions read, the same on a live stack (agents in front of the simulator) and a replay
 * stack (replay-stack.ts): each proxy's records and console lines in order, its hints, its log file, and the
 * secrets no sink may hold.
 */
export interface ProxySide<N extends string = string> {
  proxies: Record<N, RunningProxy>;
  logFiles: Record<N, string>;
  traffic: Array<{ proxy: N; line: string; record: TrafficRecord }>;
  hints: string[];
  keys: Record<string, string>;
  token: string;
}

export const CHAT = /^\/v1\/chat\/completions/;
export const CHAT_ANY = /\/chat\/completions/;
export const MESSAGES = /^\/v1\/messages/;
export const MESSAGES_ANY = /\/messages/;

export function expectOk(run: AgentRun): void {
  expect(run.code, `exit code; stdout:\n${run.stdout.slice(-1500)}\nstderr:\n${run.stderr.slice(-2000)}`).toBe(0);
}

/** The records of `proxy` since `before` whose path matches, once there are `min` of them. */
export function recordsAfter<N extends string>(
  stack: ProxySide<N>,
  proxy: N,
  before: number,
  path: RegExp,
  min = 1,
): Promise<TrafficRecord[]> {
  const pick = () =>
    stack.traffic
      .slice(before)
      .filter((t) => t.proxy === proxy && path.test(t.record.path))
      .map((t) => t.record);
  return until(() => (pick().length >= min ? pick() : undefined), 10_000, `${min} ${path} record(s) on ${proxy}`);
}

/** Every request in each proxy's log (as its console reported it), and no key or token anywhere; the tool's output holds no key. */
export async function expectCompleteCleanLogs<N extends string>(stack: ProxySide<N>, outputs: string[]): Promise<void> {
  const secrets = [...Object.values(stack.keys), stack.token];
  for (const name of Object.keys(stack.proxies) as N[]) {
    const fromConsole = stack.traffic.filter((t) => t.proxy === name).map((t) => t.record.id);
    const readIds = () => logRecords(stack.logFiles[name]).map((r) => r.id);
    // The log writer batches: wait until the file has caught up with the console.
    const ids = await until(
      () => (readIds().length >= fromConsole.length ? readIds() : undefined),
      10_000,
      `${name} log flushed`,
    );
    expect(new Set(ids)).toEqual(new Set(fromConsole));
    assertNoCanary(readFileSync(stack.logFiles[name], 'utf8'), secrets);
  }
  assertNoCanary(stack.traffic.map((t) => t.line).join('\n'), secrets);
  assertNoCanary(stack.hints.join('\n'), secrets);
  // The tools never saw the real keys: only the local token went into their environment.
  assertNoCanary(outputs.join('\n'), Object.values(stack.keys));
}
