// The language server in real VS Code (code-server 4.100.3): open a .env with
// /v1/v1, wait for the diagnostic event, apply the quick fix, see it clear.
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertAllPassed, formatRun, keepForReadme, runExtensionHostTests, screenshot } from '../harness/index.js';

let workspace: string;
let home: string;
// Shaped like a key for the scanner; not a real one. The canary for every log sink.
const FAKE_KEY = 'sk-Zq81Lm0Pk2Nx7Rt4Vb6Wc3Yd';

function filesUnder(path: string): string[] {
  try {
    if (!statSync(path).isDirectory()) return [path];
  } catch {
    return [];
  }
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .map((f) => join(path, f))
    .filter((f) => statSync(f).isFile());
}

beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'loopgate-lsp-ws-'));
  home = mkdtempSync(join(tmpdir(), 'loopgate-lsp-home-'));
  copyFileSync(join(__dirname, '..', '..', 'fixtures', 'config-lint', 'e2e.env'), join(workspace, '.env'));
  mkdirSync(join(workspace, 'showcase'));
  writeFileSync(
    join(workspace, 'showcase', '.env'),
    "# Pasted from the provider's page\nOPENAI_BASE_URL=https://api.example.com/v1/v1\nOPENAI_MODEL=gpt-4o-mini\n",
  );
  writeFileSync(join(workspace, 'client.py'), `from openai import OpenAI\n\nclient = OpenAI(api_key="${FAKE_KEY}")\n`);
});

afterAll(() => {
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

let shot: string | undefined;

describe('Loopgate language server in VS Code', () => {
  it('flags /v1/v1 in .env and the quick fix corrects it', async () => {
    const run = await runExtensionHostTests({
      testsEntry: join(__dirname, 'lsp.ext.ts'),
      workspace,
      timeoutMs: 180_000,
      // No proxy: this suite is about the editor, not the upstream.
      userSettings: { 'loopgate.proxy.autoStart': false },
      env: { LOOPGATE_HOME: home },
      afterResults: async (page) => {
        // What a user sees: the squiggle under the URL and the hover that explains it.
        const hover = page.locator('.monaco-hover', { hasText: '/v1' }).first();
        await hover.waitFor({ state: 'visible', timeout: 20_000 });
        shot = await screenshot(page, 'lsp-inline-diagnostic');
        keepForReadme(shot, 'inline-diagnostic.png');
      },
    });
    console.log(formatRun(run));
    assertAllPassed(run);
    const byName = Object.fromEntries(run.results.map((r) => [r.name, r.status]));
    expect(byName['a duplicated /v1 in .env is flagged and its quick fix corrects the text']).toBe('passed');
    expect(statSync(shot!).size).toBeGreaterThan(10_000);
    // The fix was saved: the file on disk is corrected.
    expect(readFileSync(join(workspace, '.env'), 'utf8')).toBe('OPENAI_BASE_URL=https://example.test/v1\n');
    expect(readFileSync(join(workspace, 'client.py'), 'utf8')).toBe(
      'import os\nfrom openai import OpenAI\n\nclient = OpenAI(api_key=os.environ["OPENAI_API_KEY"])\n',
    );
    // Canary: the key never reached code-server's log, VS Code's logs or the language client's output channel.
    for (const file of filesUnder(run.logFile).concat(filesUnder(run.logFile.replace(/\.log$/, '-vscode-logs')))) {
      expect(readFileSync(file, 'utf8').includes(FAKE_KEY), file).toBe(false);
    }
  });
});
