// Runs inside real VS Code (both targets) against the simulator the outer test
// started, with a base URL set and no key stored yet: what a new user sees
// before the key (issue 26 §5), what vscode.lm consumers cost upstream, and a
// second key added while the Models view is closed (the rows are read by the
// outer test once the view opens again).
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../extension/extension.js';
import { activateLoopgate, plainKeyOf as keyOf, simOrigin } from '../harness/ext/loopgate.js';
import { assert, runTests, skip, test, waitFor } from '../harness/ext/testkit.js';

const hasChatProviders = () =>
  typeof (vscode.lm as unknown as Record<string, unknown>).registerLanguageModelChatProvider === 'function';

let api: LoopgateTestApi;

/** GET /v1/models requests the simulator (the upstream) received since it was last cleared. */
async function upstreamModelRequests(): Promise<number> {
  const all = (await (await fetch(`${simOrigin()}/_sim/requests`)).json()) as Array<{ method: string; path: string }>;
  return all.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/models')).length;
}

test(
  'with a base URL and no key yet: nothing goes upstream, and the status bar says no key is stored',
  async () => {
    api = await activateLoopgate();
    await waitFor(() => (api.host.state.kind === 'running' ? true : undefined), {
      timeoutMs: 30_000,
      message: `proxy running (${JSON.stringify(api.host.state)})`,
    });
    const state = await waitFor(
      () => (api.models.state.kind === 'problem' || api.models.state.kind === 'loaded' ? api.models.state : undefined),
      {
        timeoutMs: 20_000,
        message: 'the Model Explorer to settle',
      },
    );
    assert.equal(state.kind, 'problem');
    if (state.kind === 'problem') {
      assert.equal(state.problem.status, undefined, `a request went out: ${JSON.stringify(state.problem)}`);
      assert.match(state.problem.detail, /No API key is stored/);
      assert.equal(state.problem.fix.command, 'loopgate.setApiKey');
    }
    // A vscode.lm consumer asking meanwhile sends nothing upstream either.
    if (hasChatProviders())
      for (let i = 0; i < 5; i++) assert.deepEqual(await vscode.lm.selectChatModels({ vendor: 'loopgate' }), []);
    assert.equal(await upstreamModelRequests(), 0, 'GET /v1/models went upstream without a key');
    assert.match(api.statusBar.text, /\$\(key\) no key/);
    assert.ok(!/\$\(error\)/.test(api.statusBar.text), `the status bar shows an error: ${api.statusBar.text}`);
    const tip = api.statusBar.tooltip;
    assert.match(tip, /No API key is stored/);
    assert.match(tip, /Loopgate: Set API Key/);
  },
  { timeoutMs: 60_000 },
);

test(
  'vscode.lm.selectChatModels answers from the models cache: 20 calls, at most one upstream GET /v1/models',
  async () => {
    if (!hasChatProviders()) skip(`VS Code ${vscode.version} has no chat provider API`);
    const saved = (await vscode.commands.executeCommand('loopgate.setApiKey', keyOf('default'))) as {
      saved: boolean;
      message: string;
    };
    assert.ok(saved.saved, saved.message);
    const first = await waitFor(
      async () => {
        const found = await vscode.lm.selectChatModels({ vendor: 'loopgate' });
        return found.some((m) => m.id === 'gpt-4.1') ? found : undefined;
      },
      { timeoutMs: 30_000, message: "the default group's models in vscode.lm" },
    );
    await fetch(`${simOrigin()}/_sim/requests`, { method: 'DELETE' });
    for (let i = 0; i < 20; i++) {
      const models = await vscode.lm.selectChatModels({ vendor: 'loopgate' });
      assert.deepEqual(models.map((m) => m.id).sort(), first.map((m) => m.id).sort());
    }
    const sent = await upstreamModelRequests();
    assert.ok(sent <= 1, `${sent} upstream GET /v1/models for 20 selectChatModels calls`);
  },
  { timeoutMs: 60_000 },
);

test(
  "a Loopgate group from Manage Models (the `configuration` schema, no deprecated managementCommand): its key joins Loopgate's keys once",
  async () => {
    const contribution = (
      vscode.extensions.getExtension('loopgate.loopgate')!.packageJSON as {
        contributes: { languageModelChatProviders: Array<Record<string, unknown>> };
      }
    ).contributes.languageModelChatProviders[0]!;
    assert.equal(contribution.managementCommand, undefined);
    assert.deepEqual((contribution.configuration as { required: string[] }).required, ['apiKey']);
    assert.equal(
      (contribution.configuration as { properties: { apiKey: { secret: boolean } } }).properties.apiKey.secret,
      true,
    );
    if (!hasChatProviders())
      skip(`VS Code ${vscode.version} has no chat provider API (the contribution is ignored there)`);
    assert.ok(api.chatProvider);
    // What VS Code 1.139 sends for a group the user added (ExtHostLanguageModels: { silent, configuration }).
    const group = { silent: true, configuration: { apiKey: keyOf('chat-only') } };
    const none = new vscode.CancellationTokenSource().token;
    assert.deepEqual(
      await api.chatProvider.provideLanguageModelChatInformation(group, none),
      [],
      'the group lists no models of its own',
    );
    assert.ok(
      (await api.keys.list()).some((k) => k.key === keyOf('chat-only')),
      "the group's key was not added",
    );
    // The chat-only group's own model shows in the vendor's list (through the proxy, from the new key).
    await waitFor(
      async () =>
        (await vscode.lm.selectChatModels({ vendor: 'loopgate' })).some((m) => m.id === 'deepseek-reasoner')
          ? true
          : undefined,
      {
        timeoutMs: 30_000,
        message: 'deepseek-reasoner (the chat-only group) in vscode.lm',
      },
    );
    // VS Code asks for each group on every model refresh: the key is not checked upstream again.
    await fetch(`${simOrigin()}/_sim/requests`, { method: 'DELETE' });
    for (let i = 0; i < 5; i++) await api.chatProvider.provideLanguageModelChatInformation(group, none);
    assert.equal(await upstreamModelRequests(), 0);
    // Back to key-1 alone for the next test.
    const added = (await api.keys.list()).find((k) => k.key === keyOf('chat-only'))!;
    assert.ok(await api.keys.remove(added.name));
    await waitFor(() => (api.models.state.kind === 'loaded' && !api.models.state.byKey ? true : undefined), {
      timeoutMs: 20_000,
      message: 'key-1 alone again',
    });
  },
  { timeoutMs: 90_000 },
);

test(
  'key-1 stored, the Models view never shown yet (the outer test adds the second key through the UI)',
  async () => {
    // The first key, stored above on a VS Code with chat providers; here otherwise.
    if (!(await api.readKey())) {
      const saved = (await vscode.commands.executeCommand('loopgate.setApiKey', keyOf('default'))) as {
        saved: boolean;
        message: string;
      };
      assert.ok(saved.saved, saved.message);
    }
    await waitFor(() => (api.models.state.kind === 'loaded' && !api.models.state.byKey ? true : undefined), {
      timeoutMs: 20_000,
      message: "key-1's models",
    });
    assert.equal(api.view.visible, false);
    // Keys coming and going while the view is closed send VS Code no refresh (it gets one when the view opens).
    let sent = 0;
    const sub = api.tree.onDidChangeTreeData(() => sent++);
    try {
      await api.keys.add(keyOf('chat-only'), 'extra');
      await waitFor(
        () => (api.models.state.kind === 'loaded' && api.models.state.byKey?.length === 2 ? true : undefined),
        { timeoutMs: 20_000, message: 'two keys' },
      );
      assert.ok(await api.keys.remove('extra'));
      await waitFor(() => (api.models.state.kind === 'loaded' && !api.models.state.byKey ? true : undefined), {
        timeoutMs: 20_000,
        message: 'key-1 alone again',
      });
    } finally {
      sub.dispose();
    }
    assert.equal(sent, 0, `${sent} refreshes sent to the hidden view`);
  },
  { timeoutMs: 60_000 },
);

export const run = runTests;
