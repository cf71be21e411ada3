// Drives `loopgate lsp --stdio` as an editor would: initialize, open, receive
// publishDiagnostics, ask for code actions, apply, change, see it clear; then
// push a model list and a proxy URL and see open documents re-checked in place.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CodeActionRequest,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  ShutdownRequest,
  type CodeAction,
  type Diagnostic,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { buildCli } from './build-cli.js';
import { startLsp, type LspSession } from './lsp-client.js';

const KEY = 'sk-Zq81Lm0Pk2Nx7Rt4Vb6Wc3Yd';
const ENV_URI = 'file:///work/project/.env';
const TS_URI = 'file:///work/project/src/client.ts';

let cli: string;
let lsp: LspSession;

async function open(uri: string, languageId: string, text: string): Promise<void> {
  await lsp.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId, version: 1, text },
  });
}

async function codeActions(uri: string, d: Diagnostic): Promise<CodeAction[]> {
  const result = await lsp.connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: d.range,
    context: { diagnostics: [d], only: ['quickfix'] },
  });
  return (result ?? []) as CodeAction[];
}

beforeAll(async () => {
  cli = await buildCli();
  lsp = startLsp(cli);
  const init = await lsp.connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: 'file:///work/project',
    capabilities: {},
    initializationOptions: { commands: true },
  });
  expect(init.capabilities.codeActionProvider).toBeTruthy();
  await lsp.connection.sendNotification(InitializedNotification.type, {});
});

afterAll(async () => {
  if (lsp && lsp.child.exitCode === null) lsp.child.kill();
});

describe('loopgate lsp --stdio', () => {
  let envText = 'OPENAI_BASE_URL=https://example.test/v1/v1\nOPENAI_MODEL=gpt-4o-mni\n';

  it('publishes the duplicated /v1 on open and clears it after the quick fix', async () => {
    const since = lsp.diagnostics.seen.length;
    await open(ENV_URI, 'dotenv', envText);
    const first = await lsp.diagnostics.next((p) => p.uri === ENV_URI, 'diagnostics for .env', since);
    expect(first.diagnostics).toEqual([
      expect.objectContaining({
        code: 'loopgate.duplicate-v1',
        source: 'loopgate',
        severity: 2,
        range: { start: { line: 0, character: 16 }, end: { line: 0, character: 42 } },
      }),
    ]);

    const actions = await codeActions(ENV_URI, first.diagnostics[0]!);
    const fix = actions.find((a) => a.isPreferred);
    expect(fix).toMatchObject({ kind: 'quickfix', title: 'Remove the duplicated /v1: https://example.test/v1' });
    expect(fix!.diagnostics).toEqual([first.diagnostics[0]]);

    const doc = TextDocument.create(ENV_URI, 'dotenv', 1, envText);
    envText = TextDocument.applyEdits(doc, fix!.edit!.changes![ENV_URI]!);
    expect(envText).toBe('OPENAI_BASE_URL=https://example.test/v1\nOPENAI_MODEL=gpt-4o-mni\n');

    const sinceChange = lsp.diagnostics.seen.length;
    await lsp.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri: ENV_URI, version: 2 },
      contentChanges: [{ text: envText }],
    });
    const cleared = await lsp.diagnostics.next(
      (p) => p.uri === ENV_URI && p.version === 2,
      'diagnostics after the fix',
      sinceChange,
    );
    expect(cleared.diagnostics).toEqual([]);
  });

  it('re-checks open documents when the model list arrives, without reopening', async () => {
    const since = lsp.diagnostics.seen.length;
    await lsp.connection.sendNotification('loopgate/state', { models: ['gpt-4o-mini', 'gpt-5.1'] });
    const refreshed = await lsp.diagnostics.next(
      (p) => p.uri === ENV_URI && p.diagnostics.length > 0,
      'model diagnostics',
      since,
    );
    expect(refreshed.diagnostics.map((d) => [d.code, d.range.start.line])).toEqual([['loopgate.unknown-model', 1]]);
    expect(refreshed.diagnostics[0]!.message).toContain('Did you mean "gpt-4o-mini"?');
    const actions = await codeActions(ENV_URI, refreshed.diagnostics[0]!);
    expect(actions.map((a) => a.title)).toContain('Change to "gpt-4o-mini"');
  });

  it('flags a direct service URL once a proxy URL is known, and drops it when the proxy stops', async () => {
    let since = lsp.diagnostics.seen.length;
    await lsp.connection.sendNotification('loopgate/state', {
      models: ['gpt-4o-mini'],
      proxyUrl: 'http://127.0.0.1:8787',
    });
    const withProxy = await lsp.diagnostics.next(
      (p) => p.uri === ENV_URI && p.diagnostics.some((d) => d.code === 'loopgate.direct-to-service'),
      'direct-to-service',
      since,
    );
    const direct = withProxy.diagnostics.find((d) => d.code === 'loopgate.direct-to-service')!;
    expect(direct.severity).toBe(3);
    const [pointAtProxy] = await codeActions(ENV_URI, direct);
    expect(pointAtProxy!.edit!.changes![ENV_URI]![0]!.newText).toBe('http://127.0.0.1:8787/v1');

    since = lsp.diagnostics.seen.length;
    await lsp.connection.sendNotification('loopgate/state', {});
    const without = await lsp.diagnostics.next((p) => p.uri === ENV_URI, 'diagnostics after the state reset', since);
    expect(without.diagnostics).toEqual([]);
  });

  it('offers the env-var fix and the Set API Key command for a hard-coded key, and never echoes the key', async () => {
    const text = `import OpenAI from 'openai';\nconst client = new OpenAI({ apiKey: "${KEY}" });\n`;
    const since = lsp.diagnostics.seen.length;
    await open(TS_URI, 'typescript', text);
    const published = await lsp.diagnostics.next((p) => p.uri === TS_URI, 'diagnostics for client.ts', since);
    expect(published.diagnostics.map((d) => d.code)).toEqual(['loopgate.api-key-in-file']);
    const actions = await codeActions(TS_URI, published.diagnostics[0]!);
    expect(actions.map((a) => a.title)).toEqual([
      'Read the key from the OPENAI_API_KEY environment variable',
      'Store it with Loopgate: Set API Key',
    ]);
    expect(actions[1]!.command).toEqual({
      title: 'Store it with Loopgate: Set API Key',
      command: 'loopgate.setApiKey',
    });
    const fixed = TextDocument.applyEdits(
      TextDocument.create(TS_URI, 'typescript', 1, text),
      actions[0]!.edit!.changes![TS_URI]!,
    );
    expect(fixed).toContain('new OpenAI({ apiKey: process.env.OPENAI_API_KEY })');
    // Canary: diagnostics, logs and stderr are sinks too.
    const sinks = JSON.stringify([published, lsp.logs.seen, actions.map((a) => [a.title, a.command])]) + lsp.stderr();
    expect(sinks).not.toContain(KEY);
  });

  it('answers bad state with a log message saying what to fix, and keeps serving', async () => {
    const since = lsp.logs.seen.length;
    await lsp.connection.sendNotification('loopgate/state', { models: 'gpt-4o', proxyUrl: 'ftp://x' });
    const warning = await lsp.logs.next(
      (m) => m.message.includes('"models" must be an array'),
      'a warning about models',
      since,
    );
    expect(warning.message).toContain('array of model ID strings');
    // The bad state reset the models; a fresh document is still checked.
    const uri = 'file:///work/project/src/other.ts';
    const sinceOpen = lsp.diagnostics.seen.length;
    await open(uri, 'typescript', "const c = new OpenAI({ baseURL: 'https://example.test/v1/chat/completions' });\n");
    const again = await lsp.diagnostics.next((p) => p.uri === uri, 'diagnostics after bad state', sinceOpen);
    expect(again.diagnostics.map((d) => d.code)).toEqual(['loopgate.endpoint-in-base']);
  });

  it("clears a document's diagnostics when it closes", async () => {
    const since = lsp.diagnostics.seen.length;
    await lsp.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri: TS_URI } });
    const closed = await lsp.diagnostics.next((p) => p.uri === TS_URI, 'diagnostics on close', since);
    expect(closed.diagnostics).toEqual([]);
  });

  it('shuts down cleanly on shutdown + exit', async () => {
    await lsp.connection.sendRequest(ShutdownRequest.type);
    await lsp.connection.sendNotification(ExitNotification.type);
    expect(await lsp.exited).toBe(0);
  });
});

describe('loopgate lsp --stdio --models --proxy-url', () => {
  it('starts with the state given on the command line (for editors that send no options)', async () => {
    const s = startLsp(cli, ['--models', 'gpt-4o-mini', '--proxy-url', 'http://127.0.0.1:8787']);
    try {
      await s.connection.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri: null,
        capabilities: {},
      });
      await s.connection.sendNotification(InitializedNotification.type, {});
      const since = s.diagnostics.seen.length;
      await s.connection.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: {
          uri: 'file:///p/.env',
          languageId: 'properties',
          version: 1,
          text: 'OPENAI_MODEL=gpt-4o-mni\nOPENAI_BASE_URL=https://example.test/v1\nOPENAI_API_KEY=' + KEY + '\n',
        },
      });
      const p = await s.diagnostics.next((x) => x.uri === 'file:///p/.env', 'diagnostics', since);
      expect(p.diagnostics.map((d) => d.code)).toEqual([
        'loopgate.unknown-model',
        'loopgate.direct-to-service',
        'loopgate.api-key-in-file',
      ]);
      // Without `commands: true` in initializationOptions the editor cannot run loopgate.setApiKey: no command action.
      const keyDiag = p.diagnostics[2]!;
      const actions = (await s.connection.sendRequest(CodeActionRequest.type, {
        textDocument: { uri: 'file:///p/.env' },
        range: keyDiag.range,
        context: { diagnostics: [keyDiag] },
      })) as CodeAction[];
      expect(actions).toEqual([]);
    } finally {
      s.child.kill();
      await s.exited;
    }
  });

  it('refuses to start without --stdio and says how to run it', async () => {
    // A PATH without a `loopgate` command: the message spells the CLI as that shell reaches it (test/cli/command-spelling.test.ts).
    const r = spawnSync(process.execPath, [cli, 'lsp'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`run \`node ${cli} lsp --stdio\``);
    expect(r.stdout).toBe('');
  });
});
