// Shared setup for simulator tests: a simulator on port 0 and the official SDK clients.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { defaultFixture, startSimulator, type Simulator, type SimulatorOptions } from '../../simulator/index.js';

function keyOf(prefix: string): string {
  const k = defaultFixture.keys.find((x) => x.key.startsWith(prefix));
  if (!k) throw new Error(`no demo key ${prefix}`);
  return k.key;
}

export const KEYS = {
  main: keyOf('sk-demo-default-'),
  claude: keyOf('sk-demo-claude-'),
  chatOnly: keyOf('sk-demo-chatonly-'),
  disabled: keyOf('sk-demo-disabled-'),
  restricted: keyOf('sk-demo-restricted-'),
  noBalance: keyOf('sk-demo-nobalance-'),
  narrow: keyOf('sk-demo-narrow-'),
  rpm2: keyOf('sk-demo-rpm2-'),
};

export function start(opts: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({ port: 0, ...opts });
}

export function openai(
  sim: Simulator,
  apiKey = KEYS.main,
  extra: Partial<ConstructorParameters<typeof OpenAI>[0]> = {},
): OpenAI {
  return new OpenAI({ apiKey, baseURL: sim.baseUrl, maxRetries: 0, timeout: 10_000, ...extra });
}

export function anthropic(
  sim: Simulator,
  apiKey = KEYS.claude,
  extra: Partial<ConstructorParameters<typeof Anthropic>[0]> = {},
): Anthropic {
  return new Anthropic({ apiKey, baseURL: sim.url, maxRetries: 0, timeout: 10_000, ...extra });
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection, got a result');
}

/** Raw fetch against the simulator (for things the SDKs cannot send). */
export function raw(sim: Simulator, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(sim.url + path, init);
}

export const hello = [{ role: 'user' as const, content: 'Hello there' }];
