// Runs inside the extension host: how the editor suites start (Loopgate
// active, keys stored through its own commands, as a user stores them) and
// what its proxy says about the keys it holds.
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../../extension/extension.js';
import fixtureJson from '../../../../simulator/default-fixture.json';
import { validateFixture } from '../../../../simulator/fixture.js';
import { assert, waitFor } from './testkit.js';

const fixture = validateFixture(fixtureJson);

/** The default fixture's first active key of `group` with neither a model list nor a rate limit of its own. */
export const plainKeyOf = (group: string): string =>
  fixture.keys.find((k) => k.group === group && k.status === 'active' && !k.models && !k.rpm)!.key;

/** Activates the extension (or gets the running one) and returns its test API. */
export async function activateLoopgate(): Promise<LoopgateTestApi> {
  const ext = vscode.extensions.getExtension<LoopgateTestApi>('loopgate.loopgate');
  assert.ok(ext, 'extension loopgate.loopgate is not loaded');
  const api = await ext.activate();
  assert.ok(api, 'activate() returns the test API outside production');
  return api;
}

/** Stores `keys` in order: the first with Set API Key (it becomes key-1), each other with Add API Key under its name. */
export async function storeKeys(keys: ReadonlyArray<readonly [key: string, name: string]>): Promise<void> {
  for (const [i, [key, name]] of keys.entries()) {
    const r = (await vscode.commands.executeCommand(
      i === 0 ? 'loopgate.setApiKey' : 'loopgate.addApiKey',
      key,
      ...(i === 0 ? [] : [name]),
    )) as { saved: boolean; message: string };
    assert.ok(r.saved, r.message);
  }
}

/** The simulator's origin, from `loopgate.baseUrl` (the simulator the outer test started). */
export const simOrigin = (): string =>
  vscode.workspace
    .getConfiguration('loopgate')
    .get<string>('baseUrl')!
    .replace(/\/v1\/?$/, '');

/** The keys most suites start with: the default group's as key-1, the Claude group's as "claude". */
export const defaultAndClaude = (keyOf: (group: string) => string): Array<[string, string]> => [
  [keyOf('default'), 'key-1'],
  [keyOf('claude'), 'claude'],
];

/** The start of a suite: the extension active, `keys` stored (as storeKeys), the proxy running. */
export async function startLoopgate(
  keys: ReadonlyArray<readonly [key: string, name: string]>,
): Promise<LoopgateTestApi> {
  const api = await activateLoopgate();
  await storeKeys(keys);
  await proxyRunning(api);
  return api;
}

/** Waits until the extension's proxy is running. */
export async function proxyRunning(api: LoopgateTestApi): Promise<void> {
  await waitFor(() => (api.host.state.kind === 'running' ? true : undefined), {
    timeoutMs: 30_000,
    message: 'proxy running',
  });
}

export interface ProxyKey {
  name: string;
  models: unknown[] | null;
  failure: string | null;
}

/** The proxy's answer to GET /_loopgate/keys, as text (for a failure message) and parsed. */
export async function proxyKeys(api: LoopgateTestApi): Promise<{ text: string; keys: ProxyKey[] }> {
  const res = await fetch(`${api.host.endpoint!.url}/_loopgate/keys`, {
    headers: { authorization: `Bearer ${api.host.token}` },
  });
  const text = await res.text();
  return { text, keys: (JSON.parse(text) as { keys: ProxyKey[] }).keys };
}
