// Runs inside real VS Code (code-server) with the Loopgate extension, against
// the simulator the outer test started (loopgate.baseUrl in user settings).
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../extension/extension.js';
import { ProxyHost } from '../../../extension/proxy-host/host.js';
// Type-only: the extension's bundle has its own copies of these classes, so nodes are told apart by contextValue.
import type { DiagnosisNode, ModelNode, ProtocolNode, ProviderNode } from '../../../extension/views/nodes.js';
import fixtureJson from '../../../simulator/default-fixture.json';
import { modelEntries, validateFixture } from '../../../simulator/fixture.js';
import { activateLoopgate } from '../harness/ext/loopgate.js';
import { assert, runTests, test, waitFor, waitForEvent } from '../harness/ext/testkit.js';

const fixture = validateFixture(fixtureJson);
const GOOD_KEY = fixture.keys.find((k) => k.group === 'default' && k.status === 'active' && !k.models && !k.rpm)!.key;
const BAD_KEY = 'sk-e2e-not-a-real-key-000000000000000000';
const PROTOCOL_LABELS = { chat: 'Chat Completions', responses: 'Responses', messages: 'Anthropic Messages' } as const;

let api: LoopgateTestApi;

function roots() {
  return api.tree.getChildren();
}

async function waitForModels(): Promise<ProviderNode[]> {
  return waitFor(
    () => {
      // With several keys (demo mode holds one per demo group) the providers sit under key nodes.
      const level = roots().flatMap((n) => (n.contextValue === 'apiKey' ? api.tree.getChildren(n) : [n]));
      const providers = level.filter((n): n is ProviderNode => n.contextValue === 'provider');
      return providers.length > 0 ? providers : undefined;
    },
    { timeoutMs: 20_000, message: 'provider nodes in the Models tree' },
  );
}

test(
  'activates and starts the proxy on the configured port',
  async () => {
    api = await activateLoopgate();
    const state = await waitFor(() => (api.host.state.kind === 'running' ? api.host.state : undefined), {
      timeoutMs: 20_000,
      message: `proxy running (state ${JSON.stringify(api.host.state)})`,
    });
    const port = vscode.workspace.getConfiguration('loopgate').get<number>('proxy.port');
    assert.equal(state.url, `http://127.0.0.1:${port}`);
    assert.equal(state.simulator, false);
    assert.equal(
      state.baseUrl,
      vscode.workspace.getConfiguration('loopgate').get<string>('baseUrl')!.replace(/\/+$/, ''),
    );
    assert.match(api.statusBar.text, new RegExp(`:${port}\\b`));
  },
  { timeoutMs: 40_000 },
);

test('the chat provider API is used where VS Code has it (1.104+) and simply absent before', async () => {
  const [major, minor] = vscode.version.split('.').map(Number) as [number, number];
  const hasApi = major > 1 || minor >= 104;
  const register = (vscode.lm as unknown as Record<string, unknown>).registerLanguageModelChatProvider;
  assert.equal(typeof register, hasApi ? 'function' : 'undefined', `VS Code ${vscode.version}`);
  // Before 1.104 no model is Loopgate's (the chat suite, chat.ext.ts, lists them where the API is).
  if (!hasApi) assert.deepEqual(await vscode.lm.selectChatModels({ vendor: 'loopgate' }), []);
  // Everything else runs: the proxy is up (the first test), and the chat's management command is there for 1.104+.
  assert.ok((await vscode.commands.getCommands(true)).includes('loopgate.manageChatModels'));
});

test('contributed commands equal registered commands', async () => {
  const contributed = (
    vscode.extensions.getExtension('loopgate.loopgate')!.packageJSON.contributes.commands as { command: string }[]
  )
    .map((c) => c.command)
    .sort();
  const registered = (await vscode.commands.getCommands(true))
    .filter((c) => /^loopgate\.[A-Za-z]+$/.test(c)) // not the view's own loopgate.models.* commands
    .sort();
  assert.deepEqual(registered, contributed);
});

test('without a key the Models tree is empty, so the "no key" welcome view shows', async () => {
  assert.equal(await api.readKey(), undefined);
  assert.deepEqual(roots(), []);
});

test('Set API Key refuses keys the service answers 401 or 403 and says why', async () => {
  const r = (await vscode.commands.executeCommand('loopgate.setApiKey', BAD_KEY)) as {
    saved: boolean;
    status?: number;
    message: string;
  };
  assert.equal(r.saved, false);
  assert.equal(r.status, 401);
  assert.match(r.message, /401 Unauthorized.*wrong, missing, deleted/);
  const restricted = fixture.keys.find((k) => k.status === 'restricted')!.key;
  const r403 = (await vscode.commands.executeCommand('loopgate.setApiKey', restricted)) as {
    saved: boolean;
    status?: number;
    message: string;
  };
  assert.deepEqual([r403.saved, r403.status], [false, 403]);
  assert.match(r403.message, /403 Forbidden.*group or model permission/);
  assert.equal(await api.readKey(), undefined);
});

test('Set API Key validates the key and keeps it only in SecretStorage, pushed without a restart', async () => {
  const pid = api.host.pid;
  assert.ok(pid);
  const r = (await vscode.commands.executeCommand('loopgate.setApiKey', GOOD_KEY)) as {
    saved: boolean;
    status?: number;
  };
  assert.deepEqual([r.saved, r.status], [true, 200]);
  assert.equal(await api.readKey(), GOOD_KEY);
  // SecretStorage holds the named list (one key here); nothing under the one-key entry of older versions.
  assert.deepEqual(JSON.parse((await api.secrets.get('loopgate.apiKeys')) ?? 'null'), [
    { name: 'key-1', key: GOOD_KEY },
  ]);
  assert.equal(await api.secrets.get('loopgate.apiKey'), undefined);
  const inspect = vscode.workspace.getConfiguration('loopgate').inspect('apiKey');
  assert.equal(inspect?.globalValue, undefined);
  assert.equal(api.host.pid, pid, 'a key change must not restart the proxy');
});

test("the tree lists the fixture group's models, grouped by owned_by, with their protocols", async () => {
  const providers = await waitForModels();
  const group = fixture.groups.default!;
  const expected = new Map<string, string[]>();
  for (const m of modelEntries(group)) expected.set(m.owned_by!, [...(expected.get(m.owned_by!) ?? []), m.id]);
  assert.deepEqual(providers.map((p) => p.label).sort(), [...expected.keys()].sort());
  for (const p of providers) {
    const models = api.tree.getChildren(p) as ModelNode[];
    assert.deepEqual(models.map((m) => m.label).sort(), [...expected.get(p.ownedBy)!].sort());
    for (const m of models) {
      assert.equal(m.contextValue, 'model');
      const protocols = api.tree.getChildren(m) as ProtocolNode[];
      assert.deepEqual(protocols.map((n) => n.protocol).sort(), [...group.protocols].sort());
      assert.deepEqual(protocols.map((n) => n.label).sort(), group.protocols.map((x) => PROTOCOL_LABELS[x]).sort());
      for (const n of protocols) assert.ok(n.iconPath instanceof vscode.ThemeIcon);
    }
  }
});

test("Try sends a minimal request through the proxy and returns the simulator's reply", async () => {
  const model = modelEntries(fixture.groups.default!)[0]!.id;
  const r = (await vscode.commands.executeCommand('loopgate.tryModel', model)) as {
    protocol: string;
    status: number;
    text?: string;
    latencyMs: number;
  };
  assert.equal(r.status, 200);
  assert.equal(r.protocol, 'responses', 'Responses first when the model lists it');
  assert.match(r.text ?? '', /^Echo: Reply with one short sentence\./);
  assert.ok(r.latencyMs >= 0);
  const chat = (await vscode.commands.executeCommand('loopgate.tryModel', model, 'chat')) as {
    protocol: string;
    text?: string;
  };
  assert.equal(chat.protocol, 'chat');
  assert.match(chat.text ?? '', /^Echo: Reply with one short sentence\./);
});

test('the filter narrows the tree and clears', async () => {
  await vscode.commands.executeCommand('loopgate.filterModels', 'deepseek');
  const providers = roots().filter((n) => n.contextValue === 'provider') as ProviderNode[];
  assert.deepEqual(
    providers.map((p) => p.ownedBy),
    ['deepseek'],
  );
  await vscode.commands.executeCommand('loopgate.clearFilter');
  assert.ok(roots().filter((n) => n.contextValue === 'provider').length > 1);
});

test('new terminals get the proxy address and the local token, not the key, and nothing is persisted', () => {
  const env = api.terminalEnv;
  const url = api.host.endpoint!.url;
  assert.equal(env.persistent, false);
  assert.equal(env.get('OPENAI_BASE_URL')?.value, `${url}/v1`);
  assert.equal(env.get('OPENAI_API_KEY')?.value, api.host.token);
  assert.equal(env.get('ANTHROPIC_BASE_URL')?.value, url);
  assert.equal(env.get('ANTHROPIC_AUTH_TOKEN')?.value, api.host.token);
  assert.notEqual(api.host.token, GOOD_KEY);
});

test("the real key is in neither the proxy's argv nor its environment", async () => {
  // Credential-named variables in the extension host must not reach the forked proxy.
  const planted = {
    OPENAI_API_KEY: 'sk-e2e-planted-openai',
    LOOPGATE_TOKEN: 'lg-e2e-planted',
    MY_SECRET: 'planted-secret',
  };
  Object.assign(process.env, planted);
  try {
    const before = api.host.pid;
    await api.host.restart();
    assert.notEqual(api.host.pid, before);
  } finally {
    for (const name of Object.keys(planted)) delete process.env[name];
  }
  const pid = api.host.pid!;
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
  assert.match(cmdline, /serve\0--ipc/);
  for (const secret of [GOOD_KEY, api.host.token, 'planted']) {
    assert.equal(cmdline.includes(secret), false, 'secret in argv');
    assert.equal(environ.includes(secret), false, 'secret in the child environment');
  }
  assert.equal(
    /(^|\0)[^=\0]*(KEY|TOKEN|SECRET)[^=\0]*=/i.test(environ),
    false,
    'credential-named variable in the child environment',
  );
});

test(
  'a key found in settings.json moves to SecretStorage; a 401 key gives a diagnosis node that fixes it',
  async () => {
    await vscode.workspace.getConfiguration('loopgate').update('apiKey', BAD_KEY, vscode.ConfigurationTarget.Global);
    await waitFor(async () => (await api.readKey()) === BAD_KEY, { message: 'the key moved into SecretStorage' });
    await waitFor(() => vscode.workspace.getConfiguration('loopgate').inspect('apiKey')?.globalValue === undefined, {
      message: 'loopgate.apiKey removed from settings',
    });
    const node = await waitFor(() => roots().find((n): n is DiagnosisNode => n.contextValue === 'diagnosis'), {
      timeoutMs: 20_000,
      message: 'a diagnosis node',
    });
    assert.equal(node.contextValue, 'diagnosis');
    assert.equal(node.problem.status, 401);
    assert.match(String(node.label), /^401 Unauthorized/);
    assert.equal(node.command?.command, 'loopgate.setApiKey');
    assert.equal(
      roots().some((n) => n.contextValue === 'provider'),
      false,
    );
  },
  { timeoutMs: 40_000 },
);

test('the status bar shows the request count and the last error', async () => {
  await waitFor(() => api.statusBar.requestCount > 0 && /\$\(error\) 401/.test(api.statusBar.text), {
    message: `status bar with a 401 (text: ${api.statusBar.text})`,
  });
});

test(
  'a second window on the same port attaches to the running proxy and does not stop it',
  async () => {
    const first = api.host.endpoint!;
    const port = Number(new URL(first.url).port);
    const second = new ProxyHost({
      cliPath: join(vscode.extensions.getExtension('loopgate.loopgate')!.extensionPath, 'dist', 'cli.js'),
      token: api.host.token,
      readConfig: () => ({ upstream: first.baseUrl, port, host: '127.0.0.1', logBodies: false, requireToken: true }),
      readKeys: async () => [],
      log: () => undefined,
    });
    try {
      const state = await second.start();
      assert.equal(state.kind, 'attached', JSON.stringify(state));
      assert.equal(second.endpoint?.url, first.url);
      await second.stop();
    } finally {
      second.dispose();
    }
    const health = await fetch(`${first.url}/_loopgate/health`, {
      headers: { authorization: `Bearer ${api.host.token}` },
    });
    assert.equal(health.status, 200);
    assert.equal((await fetch(`${first.url}/_loopgate/health`)).status, 401);
  },
  { timeoutMs: 40_000 },
);

/** A proxy as another VS Code window (or `loopgate serve`) would run it: same local token, its own settings. */
function otherProxy(port: number, upstream: string | undefined, requireToken = true): ProxyHost {
  return new ProxyHost({
    cliPath: join(vscode.extensions.getExtension('loopgate.loopgate')!.extensionPath, 'dist', 'cli.js'),
    token: api.host.token,
    readConfig: () => ({ upstream, port, host: '127.0.0.1', logBodies: false, requireToken }),
    readKeys: async () => [],
    log: () => undefined,
  });
}

async function startedOther(port: number, upstream: string | undefined, requireToken = true): Promise<ProxyHost> {
  const other = otherProxy(port, upstream, requireToken);
  const state = await other.start();
  assert.equal(state.kind, 'running', JSON.stringify(state));
  return other;
}

/** `loopgate serve --no-token` as a user would run it in a terminal; resolves once it listens. */
function cliNoToken(port: number): Promise<ChildProcess> {
  const cli = join(vscode.extensions.getExtension('loopgate.loopgate')!.extensionPath, 'dist', 'cli.js');
  const child = fork(cli, ['serve', '--port', String(port), '--no-token', '--no-log', '--quiet'], {
    env: { PATH: process.env.PATH, LOOPGATE_HOME: mkdtempSync(join(tmpdir(), 'lg-e2e-cli-')) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (/listening on/.test(out)) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`loopgate serve --no-token exited with ${code}: ${out}`)));
  });
}

async function closeOther(other: ProxyHost): Promise<void> {
  await other.stop();
  other.dispose();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

const configuredBaseUrl = () => vscode.workspace.getConfiguration('loopgate').get<string>('baseUrl')!;

test(
  'the window attaches only to a proxy that proves it knows the token and uses the same upstream',
  async () => {
    const { url } = api.host.endpoint!;
    const port = Number(new URL(url).port);
    await vscode.commands.executeCommand('loopgate.stopProxy');
    // Anything can answer 200 {"loopgate": …}: it must not get the token.
    const seen: Array<{ url?: string; headers: object }> = [];
    const fake: Server = createServer((req, res) => {
      seen.push({ url: req.url, headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          loopgate: 'x',
          siteUrl: 'https://evil.example',
          baseUrl: 'https://evil.example/v1',
          simulator: false,
        }),
      );
    });
    await new Promise<void>((r) => fake.listen(port, '127.0.0.1', () => r()));
    try {
      const state = await api.host.start();
      assert.equal(state.kind, 'failed', JSON.stringify(state));
      assert.match(
        (state as { message: string }).message,
        new RegExp(
          `^Port ${port} is taken by something that is not this user's Loopgate proxy.*Change loopgate\\.proxy\\.port`,
        ),
      );
      assert.deepEqual(
        seen.map((r) => r.url),
        ['/_loopgate/health'],
      );
      assert.equal(JSON.stringify(seen).includes(api.host.token), false, 'the token reached the impostor');
      assert.equal(api.terminalEnv.get('OPENAI_BASE_URL'), undefined);
    } finally {
      await new Promise((r) => fake.close(r));
    }
    // A `loopgate serve --no-token` in a terminal cannot prove anything either.
    const open = await cliNoToken(port);
    try {
      const state = await api.host.start();
      assert.equal(state.kind, 'failed', JSON.stringify(state));
      assert.match((state as { message: string }).message, /runs without a local token \(`loopgate serve --no-token`/);
    } finally {
      open.kill('SIGTERM');
      await new Promise((r) => (open.exitCode !== null ? r(undefined) : open.once('exit', r)));
    }
    // Another window's proxy with requireToken off still proves the token it holds: attached.
    const relaxed = await startedOther(port, configuredBaseUrl(), false);
    try {
      const state = await api.host.start();
      assert.equal(state.kind, 'attached', JSON.stringify(state));
      await vscode.commands.executeCommand('loopgate.stopProxy');
    } finally {
      await closeOther(relaxed);
    }
    // This user's proxy, on another upstream: not used silently.
    const demo = await startedOther(port, undefined);
    try {
      const state = await api.host.start();
      assert.equal(state.kind, 'failed', JSON.stringify(state));
      assert.equal((state as { code?: string }).code, 'upstream-mismatch');
      assert.match(
        (state as { message: string }).message,
        /runs the embedded simulator \(demo mode\), but this window's loopgate\.baseUrl gives \{base_url\} http:\/\/127\.0\.0\.1:\d+\/v1\..*loopgate\.proxy\.port/,
      );
    } finally {
      await closeOther(demo);
    }
    assert.equal((await api.host.start()).kind, 'running');
  },
  { timeoutMs: 60_000 },
);

test(
  "a window attached to another window's proxy starts its own when that one goes away, and follows a port change",
  async () => {
    const { url } = api.host.endpoint!;
    const port = Number(new URL(url).port);
    await vscode.commands.executeCommand('loopgate.stopProxy');
    let other = await startedOther(port, configuredBaseUrl());
    try {
      assert.equal((await api.host.start()).kind, 'attached');
      assert.equal(api.host.pid, undefined);
      assert.equal(api.terminalEnv.get('OPENAI_BASE_URL')?.value, `${url}/v1`);
      await other.stop(); // the other window closes
      await waitFor(() => api.host.state.kind === 'running' && api.host.pid !== undefined, {
        timeoutMs: 20_000,
        message: `this window's own proxy (state ${JSON.stringify(api.host.state)})`,
      });
      assert.equal(api.host.endpoint?.url, url);
      assert.equal(api.terminalEnv.get('OPENAI_API_KEY')?.value, api.host.token);
      // Attached again, then the port setting changes: the window moves.
      await vscode.commands.executeCommand('loopgate.stopProxy');
      other = await startedOther(port, configuredBaseUrl());
      assert.equal((await api.host.start()).kind, 'attached');
      const moved = await freePort();
      await vscode.workspace
        .getConfiguration('loopgate')
        .update('proxy.port', moved, vscode.ConfigurationTarget.Global);
      await waitFor(() => api.host.state.kind === 'running' && api.host.endpoint?.url === `http://127.0.0.1:${moved}`, {
        timeoutMs: 20_000,
        message: `the proxy on the new port ${moved}`,
      });
    } finally {
      await closeOther(other);
    }
    await vscode.workspace.getConfiguration('loopgate').update('proxy.port', port, vscode.ConfigurationTarget.Global);
    await waitFor(() => api.host.state.kind === 'running' && api.host.endpoint?.url === url, {
      timeoutMs: 20_000,
      message: 'the proxy back on its port',
    });
  },
  { timeoutMs: 90_000 },
);

test(
  'a crashed proxy is restarted with backoff',
  async () => {
    const pid = api.host.pid!;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => api.host.state.kind === 'running' && api.host.pid !== undefined && api.host.pid !== pid, {
      timeoutMs: 25_000,
      message: 'the proxy running again under a new pid',
    });
  },
  { timeoutMs: 40_000 },
);

test(
  'Set API Key with a good key replaces the bad one and the models come back',
  async () => {
    const r = (await vscode.commands.executeCommand('loopgate.setApiKey', GOOD_KEY)) as { saved: boolean };
    assert.equal(r.saved, true);
    await waitForModels();
    // The problem is fixed: the status bar stops showing the old error (the successful request's line may still be on its way).
    await waitFor(() => !/\$\(error\)/.test(api.statusBar.text), {
      message: `the status bar without the old error (text: ${api.statusBar.text})`,
    });
  },
  { timeoutMs: 40_000 },
);

test(
  'a 200 stream that ends in an error event shows as an error in the status bar',
  async () => {
    const { url } = api.host.endpoint!;
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${api.host.token}`,
        'content-type': 'application/json',
        'x-sim-fault': 'error-event-mid-stream',
      },
      body: JSON.stringify({
        model: modelEntries(fixture.groups.default!)[0]!.id,
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
      }),
    });
    assert.equal(res.status, 200);
    await res.text();
    await waitFor(() => /\$\(error\) 200/.test(api.statusBar.text), {
      message: `the status bar with the stream's error (text: ${api.statusBar.text})`,
    });
  },
  { timeoutMs: 20_000 },
);

test(
  'a traffic log that cannot be written shows in the status bar, and its recovery clears it',
  async () => {
    const state = api.host.state;
    assert.ok(state.kind === 'running' && state.logFile, 'our own proxy, with a log file');
    const logFile = state.logFile;
    // A pipe whose reader has gone: every write fails with EPIPE. (Not a link to /dev/full: a link at the log's
    // name is refused at start since issue 23 F-J.) The next proxy opens the path anew, while a reader is there.
    rmSync(logFile, { force: true });
    execFileSync('mkfifo', [logFile]);
    let reader: number | undefined = openSync(logFile, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      await vscode.commands.executeCommand('loopgate.stopProxy');
      assert.equal(((await vscode.commands.executeCommand('loopgate.startProxy')) as { kind: string }).kind, 'running');
      closeSync(reader);
      reader = undefined;
      const send = () =>
        fetch(`${api.host.endpoint!.url}/v1/models`, { headers: { authorization: `Bearer ${api.host.token}` } }).then(
          (r) => r.text(),
        );
      await send();
      await waitFor(() => /\$\(warning\) log/.test(api.statusBar.text), {
        message: `the status bar with the log warning (text: ${api.statusBar.text})`,
      });
      assert.match(api.host.logTrouble ?? '', /cannot write .*EPIPE/);
    } finally {
      if (reader !== undefined) closeSync(reader);
      rmSync(logFile, { force: true });
      writeFileSync(logFile, '');
    }
    // Space again: the next record is written and the warning goes.
    await fetch(`${api.host.endpoint!.url}/v1/models`, { headers: { authorization: `Bearer ${api.host.token}` } }).then(
      (r) => r.text(),
    );
    await waitFor(() => !/\$\(warning\)/.test(api.statusBar.text), {
      message: `the status bar without the log warning (text: ${api.statusBar.text})`,
    });
    assert.equal(api.host.logTrouble, undefined);
  },
  { timeoutMs: 40_000 },
);

async function restartedOn(change: () => Thenable<unknown>): Promise<void> {
  const pid = api.host.pid;
  await change();
  await waitFor(() => api.host.state.kind === 'running' && api.host.pid !== pid, {
    timeoutMs: 25_000,
    message: 'the proxy restarted under a new pid',
  });
}

test(
  'a base URL with a doubled /v1 is normalised and the proxy restarts on it',
  async () => {
    const original = vscode.workspace.getConfiguration('loopgate').get<string>('baseUrl')!;
    const base = original.replace(/\/+$/, '');
    await restartedOn(() => vscode.commands.executeCommand('loopgate.setBaseUrl', `${base}/v1/chat/completions`));
    const state = api.host.endpoint!;
    assert.equal(state.baseUrl, base.endsWith('/v1') ? base : `${base}/v1`);
    await waitForModels();
    await restartedOn(() => vscode.commands.executeCommand('loopgate.setBaseUrl', original));
  },
  { timeoutMs: 60_000 },
);

test(
  'with no base URL the proxy runs the simulator and the tree says demo mode',
  async () => {
    const original = vscode.workspace.getConfiguration('loopgate').get<string>('baseUrl')!;
    await restartedOn(() => vscode.commands.executeCommand('loopgate.setBaseUrl', ''));
    assert.equal(api.host.endpoint?.simulator, true);
    await waitForModels();
    assert.equal(roots()[0]?.label, 'Demo mode (simulator)');
    assert.match(api.statusBar.text, /\$\(beaker\) Loopgate/);
    await restartedOn(() => vscode.commands.executeCommand('loopgate.setBaseUrl', original));
    await waitForModels();
    assert.equal(api.host.endpoint?.simulator, false);
  },
  { timeoutMs: 60_000 },
);

test(
  'demo mode never gives the stored key to the simulator; Set API Key there saves without a check',
  async () => {
    const realKey = 'sk-e2e-real-service-key-00000000000000001';
    const original = configuredBaseUrl();
    await restartedOn(() => vscode.commands.executeCommand('loopgate.setBaseUrl', ''));
    await api.secrets.store('loopgate.apiKeys', JSON.stringify([{ name: 'key-1', key: realKey }]));
    await waitFor(async () => (await api.readKey()) === realKey, { message: 'the real key stored' });
    // A key change is pushed to the running proxy (as the key-change reaction does): the simulator keeps its demo key.
    await api.host.pushKey();
    await vscode.commands.executeCommand('loopgate.refreshModels');
    await waitForModels();
    assert.equal(
      roots().some((n) => n.contextValue === 'diagnosis'),
      false,
      'no 401 diagnosis after the key was pushed',
    );
    // And a (re)start does not hand it over either.
    await restartedOn(() => api.host.restart());
    assert.equal(api.host.endpoint?.simulator, true);
    await waitForModels();
    assert.equal(
      roots().some((n) => n.contextValue === 'diagnosis'),
      false,
      'no 401 diagnosis: the simulator got its demo key',
    );
    const r = (await vscode.commands.executeCommand(
      'loopgate.setApiKey',
      'sk-e2e-another-real-key-000000000000002',
    )) as { saved: boolean; status?: number; message: string };
    assert.deepEqual([r.saved, r.status], [true, undefined]);
    assert.match(r.message, /^Saved without a check\. No base URL is set \(loopgate\.baseUrl\)/);
    assert.equal(await api.readKey(), 'sk-e2e-another-real-key-000000000000002');
    await vscode.commands.executeCommand('loopgate.refreshModels');
    await waitForModels();
    assert.equal(
      roots().some((n) => n.contextValue === 'diagnosis'),
      false,
    );
    await restartedOn(() => vscode.commands.executeCommand('loopgate.setBaseUrl', original));
    const restored = (await vscode.commands.executeCommand('loopgate.setApiKey', GOOD_KEY)) as {
      saved: boolean;
      status?: number;
    };
    assert.deepEqual([restored.saved, restored.status], [true, 200]);
    await waitForModels();
  },
  { timeoutMs: 60_000 },
);

test('toggling loopgate.proxy.autoStart leaves the running proxy alone', async () => {
  const pid = api.host.pid;
  assert.ok(pid);
  const kinds: string[] = [];
  const sub = api.host.onDidChangeState((s) => kinds.push(s.kind));
  const config = vscode.workspace.getConfiguration('loopgate');
  try {
    for (const value of [false, undefined]) {
      const seen = waitForEvent(vscode.workspace.onDidChangeConfiguration, {
        filter: (e) => e.affectsConfiguration('loopgate.proxy.autoStart'),
        message: 'the autoStart change',
      });
      await config.update('proxy.autoStart', value, vscode.ConfigurationTarget.Global);
      await seen;
      await api.settingsSettled();
    }
  } finally {
    sub.dispose();
  }
  assert.deepEqual(kinds, []);
  assert.equal(api.host.pid, pid);
});

test(
  "a workspace's settings cannot redirect the key or switch the token off",
  async () => {
    const config = vscode.workspace.getConfiguration('loopgate');
    const before = api.host.endpoint!;
    await config.update('baseUrl', 'https://attacker.example/v1', vscode.ConfigurationTarget.Workspace);
    await config.update('proxy.requireToken', false, vscode.ConfigurationTarget.Workspace);
    try {
      const { readSettings } = await import('../../../extension/settings.js');
      assert.notEqual(readSettings().baseUrl, 'https://attacker.example/v1');
      assert.equal(readSettings().proxy.requireToken, true);
      // The change event restarts the proxy, on the user's upstream.
      await waitFor(() => api.host.endpoint !== undefined && api.host.pid !== undefined, {
        message: 'the proxy running',
      });
      assert.equal(api.host.endpoint!.siteUrl, before.siteUrl);
    } finally {
      await config.update('baseUrl', undefined, vscode.ConfigurationTarget.Workspace);
      await config.update('proxy.requireToken', undefined, vscode.ConfigurationTarget.Workspace);
    }
    await waitFor(() => api.host.endpoint !== undefined, { message: 'the proxy running again' });
  },
  { timeoutMs: 60_000 },
);

test(
  'models without supported_endpoint_types are probed on demand',
  async () => {
    // A relay that lists no endpoint types and has only Chat Completions.
    const upstream = createServer((req, res) => {
      const json = (status: number, body: object) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      req.resume();
      req.on('end', () => {
        if (req.method === 'GET' && req.url === '/v1/models')
          return json(200, { object: 'list', data: [{ id: 'plain-model', object: 'model', owned_by: 'acme' }] });
        if (req.method === 'POST' && req.url === '/v1/chat/completions')
          return json(200, {
            choices: [{ index: 0, message: { role: 'assistant', content: 'plain reply' }, finish_reason: 'stop' }],
          });
        json(404, {
          error: { message: `Invalid URL (${req.method} ${req.url})`, type: 'invalid_request_error', code: '' },
        });
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    const original = vscode.workspace.getConfiguration('loopgate').get<string>('baseUrl')!;
    const bridge = vscode.workspace.getConfiguration('loopgate').get<string>('proxy.bridge');
    try {
      await restartedOn(() =>
        vscode.workspace.getConfiguration('loopgate').update('proxy.bridge', 'off', vscode.ConfigurationTarget.Global),
      );
      await restartedOn(() =>
        vscode.commands.executeCommand(
          'loopgate.setBaseUrl',
          `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
        ),
      );
      const [acme] = await waitForModels();
      const [unprobed] = api.tree.getChildren(acme!) as ModelNode[];
      assert.equal(unprobed?.contextValue, 'modelUnprobed');
      const found = (await vscode.commands.executeCommand('loopgate.probeProtocols', 'plain-model')) as string[];
      assert.deepEqual(found, ['chat']);
      const [probed] = api.tree.getChildren(roots().find((n) => n.contextValue === 'provider')!) as ModelNode[];
      assert.equal(probed?.contextValue, 'model');
      const r = (await vscode.commands.executeCommand('loopgate.tryModel', 'plain-model')) as {
        protocol: string;
        text?: string;
      };
      assert.deepEqual([r.protocol, r.text], ['chat', 'plain reply']);
    } finally {
      await restartedOn(() =>
        vscode.workspace
          .getConfiguration('loopgate')
          .update('proxy.bridge', bridge === 'auto' ? undefined : bridge, vscode.ConfigurationTarget.Global),
      );
      await restartedOn(() => vscode.commands.executeCommand('loopgate.setBaseUrl', original));
      upstream.close();
    }
    await waitForModels();
  },
  { timeoutMs: 90_000 },
);

test(
  'Run Diagnosis shows the doctor report as a markdown document',
  async () => {
    const report = (await vscode.commands.executeCommand('loopgate.runDiagnosis')) as string | undefined;
    assert.ok(report && report.length > 20, 'a report');
    assert.equal(report.includes(GOOD_KEY), false);
    const doc = vscode.workspace.textDocuments.find((d) => d.languageId === 'markdown' && d.getText() === report);
    assert.ok(doc, 'the report is open as a markdown document');
  },
  { timeoutMs: 70_000 },
);

test('Export Redacted Log writes a HAR without the key or the token', async () => {
  const out = join(tmpdir(), `loopgate-e2e-${process.pid}-${Date.now()}.har`);
  const written = (await vscode.commands.executeCommand('loopgate.exportLog', out)) as string | undefined;
  assert.equal(written, out);
  assert.ok(existsSync(out));
  const text = readFileSync(out, 'utf8');
  const har = JSON.parse(text) as { log: { entries: unknown[] } };
  assert.ok(har.log.entries.length > 0);
  assert.equal(text.includes(GOOD_KEY), false);
  assert.equal(text.includes(api.host.token), false);
});

test('the Copy Environment command gives shell exports with the token', async () => {
  const text = (await vscode.commands.executeCommand('loopgate.copyEnvironment')) as string;
  assert.match(text, new RegExp(`^export OPENAI_BASE_URL='${api.host.endpoint!.url}/v1'$`, 'm'));
  assert.equal(text.includes(GOOD_KEY), false);
  assert.equal(await vscode.env.clipboard.readText(), text);
});

test(
  "two keys: both groups' models, grouped by key, and a Try on each reaches the key whose group serves it",
  async () => {
    const claudeKey = fixture.keys.find((k) => k.group === 'claude' && k.status === 'active')!.key;
    const before = await api.readKey();
    assert.equal(before, GOOD_KEY);
    const added = (await vscode.commands.executeCommand('loopgate.addApiKey', claudeKey, 'claude')) as {
      saved: boolean;
      message: string;
    };
    assert.equal(added.saved, true, added.message);
    // The proxy confirms it holds both; the tree then groups by key.
    const keyNodes = await waitFor(
      () => {
        const k = roots().filter((n) => n.contextValue === 'apiKey');
        return k.length === 2 ? k : undefined;
      },
      {
        timeoutMs: 20_000,
        message: `two key nodes in the Models tree (roots: ${roots()
          .map((n) => n.label)
          .join(', ')})`,
      },
    );
    assert.deepEqual(
      keyNodes.map((n) => n.label),
      ['key-1', 'claude'],
    );
    const modelsOf = (node: (typeof keyNodes)[number]) =>
      api.tree
        .getChildren(node)
        .flatMap((p) => api.tree.getChildren(p))
        .map((m) => String(m.label));
    assert.ok(modelsOf(keyNodes[0]!).includes('gpt-4o-mini'), "the default group's models under key-1");
    assert.ok(modelsOf(keyNodes[1]!).includes('claude-sonnet-4-6'), "the Claude group's models under claude");
    assert.ok(!modelsOf(keyNodes[0]!).includes('claude-sonnet-4-6'));
    await waitFor(() => /\$\(key\) 2/.test(api.statusBar.text), {
      message: `the status bar counting two keys (text: ${api.statusBar.text})`,
    });

    const claude = (await vscode.commands.executeCommand('loopgate.tryModel', 'claude-sonnet-4-6', 'messages')) as {
      status: number;
      route?: string;
    };
    assert.equal(claude.status, 200);
    assert.equal(claude.route, 'claude native');
    const gpt = (await vscode.commands.executeCommand('loopgate.tryModel', 'gpt-4o-mini', 'responses')) as {
      status: number;
      route?: string;
    };
    assert.equal(gpt.status, 200);
    assert.equal(gpt.route, 'key-1 native');

    // Renamed and removed by name; the first key stays.
    assert.equal(await vscode.commands.executeCommand('loopgate.renameApiKey', 'claude', 'anthropic'), true);
    await waitFor(() => roots().some((n) => n.label === 'anthropic') || undefined, {
      timeoutMs: 20_000,
      message: 'the renamed key in the tree',
    });
    assert.equal(await vscode.commands.executeCommand('loopgate.removeApiKey', 'anthropic'), true);
    await waitFor(() => roots().every((n) => n.contextValue !== 'apiKey') || undefined, {
      timeoutMs: 20_000,
      message: 'one key again: the tree by provider',
    });
    assert.equal(await api.readKey(), GOOD_KEY);
  },
  { timeoutMs: 60_000 },
);

test(
  'Stop Proxy stops the proxy this window started and clears the terminal variables; Start Proxy brings it back',
  async () => {
    const url = api.host.endpoint!.url;
    await vscode.commands.executeCommand('loopgate.stopProxy');
    assert.equal(api.host.state.kind, 'stopped');
    await assert.rejects(fetch(`${url}/_loopgate/health`), 'nothing listens on the port any more');
    assert.equal(api.terminalEnv.get('OPENAI_API_KEY'), undefined);
    assert.deepEqual(roots(), [], 'the "not running" welcome view shows');
    const state = (await vscode.commands.executeCommand('loopgate.startProxy')) as { kind: string };
    assert.equal(state.kind, 'running');
    assert.equal(api.terminalEnv.get('OPENAI_API_KEY')?.value, api.host.token);
    await waitForModels();
  },
  { timeoutMs: 40_000 },
);

test(
  'Set OTLP Collector Headers keeps them in SecretStorage only; a malformed value is refused without being echoed',
  async () => {
    const secret = 'authorization=Bearer%20otlp-team-canary-5150';
    assert.equal(await vscode.commands.executeCommand('loopgate.setOtlpHeaders', secret), true);
    assert.equal(await api.secrets.get('loopgate.otlpHeaders'), secret);
    assert.ok(
      !JSON.stringify(vscode.workspace.getConfiguration('loopgate')).includes('otlp-team-canary'),
      'the headers are in the settings',
    );
    assert.equal(await vscode.commands.executeCommand('loopgate.setOtlpHeaders', 'no-equals-sign-otlp-canary'), false);
    assert.equal(await api.secrets.get('loopgate.otlpHeaders'), secret, 'a malformed value replaced the stored one');
    assert.equal(await vscode.commands.executeCommand('loopgate.setOtlpHeaders', ''), true);
    assert.equal(await api.secrets.get('loopgate.otlpHeaders'), undefined);
  },
  { timeoutMs: 30_000 },
);

export const run = runTests;
