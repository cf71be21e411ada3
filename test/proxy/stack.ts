// A real simulator and a real proxy on port 0, wired the way a user runs them.
import { readFileSync } from 'node:fs';
import type { TrafficRecord } from '../../core/record.js';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { Simulator } from '../../simulator/index.js';
import type { RunningProxy } from '../../proxy/server.js';
import { startKitStack } from '../kit/stack.js';
import type { Upstream } from '../kit/upstream.js';
import type { ProxyOptions } from '../../core/options.js';
import defaultFixture from '../../simulator/default-fixture.json';

export const TOKEN = 'lg-local-test-token-0123456789abcdefghijklmnop';

function fixtureKey(match: (k: (typeof defaultFixture.keys)[number]) => boolean): string {
  const found = defaultFixture.keys.find(match);
  if (!found) throw new Error('no such key in the default fixture');
  return found.key;
}

export const KEYS = {
  default: fixtureKey(
    (k) => k.group === 'default' && k.status === 'active' && k.balance > 0 && !('models' in k) && !('rpm' in k),
  ),
  claude: fixtureKey((k) => k.group === 'claude'),
  chatOnly: fixtureKey((k) => k.group === 'chat-only'),
  disabled: fixtureKey((k) => k.status === 'disabled'),
  restricted: fixtureKey((k) => k.status === 'restricted'),
  noBalance: fixtureKey((k) => k.balance === 0),
  narrow: fixtureKey((k) => 'models' in k),
  rpm2: fixtureKey((k) => 'rpm' in k),
};

/** Named keys, in this order: `namedKeys({ openai: KEYS.default })` is `[{ name: 'openai', key, named: true }]`. */
export function namedKeys(keys: Record<string, string>): Array<{ name: string; key: string; named: true }> {
  return Object.entries(keys).map(([name, key]) => ({ name, key, named: true as const }));
}

/** The demo fixture's three usable groups as named keys, in this order: default, claude, chat-only. */
export function threeGroupKeys(): Array<{ name: string; key: string; named: true }> {
  return [
    { name: 'default', key: KEYS.default, named: true },
    { name: 'claude', key: KEYS.claude, named: true },
    { name: 'chat-only', key: KEYS.chatOnly, named: true },
  ];
}

/** POSTs a JSON body to a proxy as its clients do: the local token, and the version header Messages asks for. */
export function postJson(
  proxyUrl: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${proxyUrl}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

export interface Stack {
  sim: Simulator;
  /** The simulator's rules (test/kit/upstream.ts): `stack.upstream.on({ path }).reply(503, ...)`. */
  upstream: Upstream;
  proxy: RunningProxy;
  traffic: string[];
  hints: string[];
  logFile: string;
  openai(baseURL?: string, apiKey?: string): OpenAI;
  anthropic(baseURL?: string, apiKey?: string): Anthropic;
  close(): Promise<void>;
}

/** The kit's stack (test/kit/stack.ts) with one proxy holding the demo's default key. */
export async function startStack(opts: Partial<ProxyOptions> = {}): Promise<Stack> {
  const traffic: string[] = [];
  const kit = await startKitStack({
    keys: { main: KEYS.default },
    token: TOKEN,
    opts: { ...opts, onTraffic: (line, record, parts) => (traffic.push(line), opts.onTraffic?.(line, record, parts)) },
  });
  const proxy = kit.proxies.main;
  return {
    sim: kit.sim,
    upstream: kit.upstream,
    proxy,
    traffic,
    hints: kit.hints,
    logFile: kit.logFiles.main,
    openai: (baseURL = `${proxy.url}/v1`, apiKey = TOKEN) => new OpenAI({ baseURL, apiKey, maxRetries: 0 }),
    anthropic: (baseURL = proxy.url, apiKey = TOKEN) => new Anthropic({ baseURL, apiKey, maxRetries: 0 }),
    close: () => kit.close(),
  };
}

/**
 * A deadline only bounds a failure, so none is shorter than this: on 2 cores with vitest's two workers beside real
 * VS Code (`npm test`'s phase 2) a log line or an analysis that takes milliseconds alone took over 5 s now and then.
 */
const MIN_DEADLINE_MS = 15_000;

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
export async function until<T>(
  check: () => T | undefined,
  timeoutMs = MIN_DEADLINE_MS,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + Math.max(timeoutMs, MIN_DEADLINE_MS);
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // A timer, not setImmediate: a wait must leave the CPU to what it waits on (the other worker, the proxy's own).
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** `until` for a check that must ask something over the network: polls with a deadline. */
export async function untilAsync<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = MIN_DEADLINE_MS,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + Math.max(timeoutMs, MIN_DEADLINE_MS);
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The records in a traffic log so far (none while the file does not exist yet). */
export function logRecords(logFile: string): TrafficRecord[] {
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return [];
  }
  // The whole lines only: read while the proxy writes, the last one may be half there.
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TrafficRecord);
}
