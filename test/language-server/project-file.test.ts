// loopgate.json through the real language server over stdio, as an editor
// sees it: the problems the proxy would refuse to start with, each where it
// is; an alias whose target is not in the key's model list, with the closest
// IDs as quick fixes; bad JSON; and nothing of this for other JSON files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Diagnostic } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { changeDocument, codeActionsAt, openDocument, startInitializedLsp, type LspSession } from './lsp-client.js';

const URI = 'file:///work/project/loopgate.json';
const TEXT = `{
  "aliases": {
    "gpt-6.2-sol": "gpt-6.1-sool",
    "gpt-4.1": "gpt-4.1"
  },
  "alias": {}
}
`;

let lsp: LspSession;

beforeAll(async () => {
  lsp = await startInitializedLsp(['--models', 'gpt-4o-mini,gpt-4.1,gpt-6.1-sol']);
}, 60_000);

afterAll(async () => {
  if (lsp && lsp.child.exitCode === null) lsp.child.kill();
});

const quickFixes = (uri: string, d: Diagnostic) => codeActionsAt(lsp, uri, d.range, [d], ['quickfix']);

describe('loopgate.json in the language server', () => {
  let text = TEXT;

  it('flags an alias target no key lists (closest IDs as quick fixes), a self-alias and an unknown setting', async () => {
    const p = await openDocument(lsp, URI, 'json', text);
    expect(p.diagnostics.map((d) => [d.code, d.severity, d.range.start.line, d.range.start.character])).toEqual([
      ['loopgate.unknown-alias-target', 2, 2, 19],
      ['loopgate.bad-project-file', 1, 3, 4],
      ['loopgate.bad-project-file', 2, 5, 2],
    ]);
    const [target, self, unknown] = p.diagnostics;
    expect(target!.message).toContain(
      'The alias gpt-6.2-sol -> gpt-6.1-sool sends requests to "gpt-6.1-sool", which is not in this key\'s GET /models list',
    );
    expect(self!.message).toContain('maps a model to itself');
    expect(unknown!.message).toContain(
      'loopgate.json has no setting "alias" (it knows "aliases", "prices", "cassette", "faults" and "budgets"); ignored.',
    );

    const actions = await quickFixes(URI, target!);
    expect(actions[0]).toMatchObject({
      kind: 'quickfix',
      title: 'Send gpt-6.2-sol as "gpt-6.1-sol"',
      isPreferred: true,
    });
    text = TextDocument.applyEdits(TextDocument.create(URI, 'json', 1, text), actions[0]!.edit!.changes![URI]!);
    expect(text).toContain('"gpt-6.2-sol": "gpt-6.1-sol",');

    const after = await changeDocument(lsp, URI, 2, [{ text }]);
    expect(after.diagnostics.map((d) => d.code)).toEqual(['loopgate.bad-project-file', 'loopgate.bad-project-file']);
  });

  it('reports JSON the proxy cannot read, where it breaks', async () => {
    const broken = '{\n  "aliases": { "gpt-6.2-sol": "gpt-6.1-sol", }\n}\n';
    const p = await changeDocument(lsp, URI, 3, [{ text: broken }]);
    expect(p.diagnostics).toEqual([
      expect.objectContaining({
        code: 'loopgate.bad-project-file',
        severity: 1,
        range: { start: { line: 1, character: 45 }, end: { line: 1, character: 46 } },
        message: expect.stringContaining(
          'loopgate.json is not valid JSON: expected a property name in double quotes (line 2, column 46)',
        ),
      }),
    ]);
  });

  it('checks only files named loopgate.json', async () => {
    const uri = 'file:///work/project/other.json';
    const p = await openDocument(lsp, uri, 'json', TEXT);
    expect(p.diagnostics).toEqual([]);
  });
});
