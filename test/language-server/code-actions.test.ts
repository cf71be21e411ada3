// `loopgate lsp --stdio` under the load an editor really puts on it: a code-action
// request on every cursor move, with a long model list. Answers come from the last
// result for that document version and state; a new state or a new version is re-checked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DidChangeTextDocumentNotification, type Diagnostic, type Range } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { changeDocument, codeActionsAt, openDocument, startInitializedLsp, type LspSession } from './lsp-client.js';

const ANT_KEY = 'sk-ant-api03-Q7w2Er9Ty4Ui1Op8As5Df';
const MODELS = ['gpt-typo-mini', ...Array.from({ length: 9_999 }, (_, i) => `provider${i % 50}/model-${i}-instruct`)];
const ENV_URI = 'file:///work/project/.env';
const ENV_TEXT = Array.from({ length: 150 }, (_, i) => `OPENAI_MODEL=gpt-typo-${i}-mini\n`).join('');

let lsp: LspSession;

const codeActions = (uri: string, range: Range, diagnostics: Diagnostic[] = []) =>
  codeActionsAt(lsp, uri, range, diagnostics);

const cursor = (line: number): Range => ({ start: { line, character: 14 }, end: { line, character: 14 } });

beforeAll(async () => {
  lsp = await startInitializedLsp([], { commands: true, models: MODELS });
}, 60_000);

afterAll(async () => {
  if (lsp && lsp.child.exitCode === null) {
    lsp.child.kill();
    await lsp.exited;
  }
});

describe('code actions with a long model list', () => {
  it('answers cursor moves from the cached result, without re-running the rules each time', async () => {
    const published = await openDocument(lsp, ENV_URI, 'dotenv', ENV_TEXT);

    const started = performance.now();
    for (let line = 0; line < 20; line++) await codeActions(ENV_URI, cursor(line));
    const elapsed = performance.now() - started;
    // Re-linting on each request took ~1.7 s apiece with 10,000 models; from the cache it is ~1 ms.
    expect(elapsed).toBeLessThan(4000);
    // Bounded: 50 unknown IDs per document say enough.
    expect(published.diagnostics.filter((d) => d.code === 'loopgate.unknown-model')).toHaveLength(50);
    const actions = await codeActions(ENV_URI, cursor(3));
    expect(actions.length).toBeGreaterThan(0);
    expect(actions.every((a) => a.diagnostics?.[0]?.range.start.line === 3)).toBe(true);
  }, 60_000);

  it('a new model list invalidates the cache: the next code action sees it', async () => {
    expect((await codeActions(ENV_URI, cursor(2))).length).toBeGreaterThan(0);
    // State and code action go over the same ordered stream: no waiting needed between them.
    await lsp.connection.sendNotification('loopgate/state', { models: ['gpt-typo-2-mini'] });
    expect(await codeActions(ENV_URI, cursor(2))).toEqual([]);
    expect((await codeActions(ENV_URI, cursor(1))).map((a) => a.title)).toEqual(['Change to "gpt-typo-2-mini"']);
  });

  it('a new document version invalidates the cache', async () => {
    await lsp.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri: ENV_URI, version: 2 },
      contentChanges: [
        { range: { start: { line: 1, character: 13 }, end: { line: 1, character: 28 } }, text: 'gpt-typo-2-mini' },
      ],
    });
    expect(await codeActions(ENV_URI, cursor(1))).toEqual([]);
  });
});

describe('the key fix in a Claude Code settings.json', () => {
  it('removes the env entry instead of writing a ${X} Claude Code would send literally, and the warning clears', async () => {
    const uri = 'file:///work/project/.claude/settings.json';
    const text = `{\n  "env": {\n    "ANTHROPIC_BASE_URL": "http://127.0.0.1:8787",\n    "ANTHROPIC_AUTH_TOKEN": "${ANT_KEY}"\n  }\n}\n`;
    const published = await openDocument(lsp, uri, 'json', text);
    expect(published.diagnostics.map((d) => d.code)).toEqual(['loopgate.api-key-in-file']);
    expect(published.diagnostics[0]!.message).toContain('integrated terminal');

    const actions = await codeActions(uri, published.diagnostics[0]!.range, published.diagnostics);
    expect(actions.map((a) => a.title)).toEqual([
      'Remove this entry (the key belongs in Loopgate: Set API Key)',
      'Store it with Loopgate: Set API Key',
    ]);
    const fixedText = TextDocument.applyEdits(
      TextDocument.create(uri, 'json', 1, text),
      actions[0]!.edit!.changes![uri]!,
    );
    expect(JSON.parse(fixedText)).toEqual({ env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787' } });
    expect(fixedText).not.toContain('${');

    const cleared = await changeDocument(lsp, uri, 2, [{ text: fixedText }]);
    expect(cleared.diagnostics).toEqual([]);
    // Canary: nothing the server said carries the key.
    expect(
      JSON.stringify([lsp.diagnostics.seen, lsp.logs.seen, actions.map((a) => a.title)]) + lsp.stderr(),
    ).not.toContain(ANT_KEY);
  });
});
