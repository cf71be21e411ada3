// The language server in real VS Code (each target of the tier): open a .env
// with /v1/v1, wait for the diagnostic event, apply the quick fix, see it
// clear. lsp.ext.ts runs in the target's editor session (editor.test.ts); its
// files are written into the session's workspace before and removed after.
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepForReadme, screenshot } from '../harness/index.js';
import type { EditorSession } from '../harness/editor-session.js';
import type { CodeServerTarget } from '../harness/paths.js';
import { readLogs, secretsIn } from '../harness/logs.js';

// Shaped like a key for the scanner; not a real one. The canary for every log sink.
const FAKE_KEY = 'sk-Zq81Lm0Pk2Nx7Rt4Vb6Wc3Yd';
const FILES = ['.env', 'showcase', 'client.py'];

export function lspSuite(target: CodeServerTarget, session: () => EditorSession): void {
  describe(`Loopgate language server in VS Code (${target} VS Code)`, () => {
    beforeAll(() => {
      const workspace = session().workspace;
      copyFileSync(join(__dirname, '..', '..', 'fixtures', 'config-lint', 'e2e.env'), join(workspace, '.env'));
      mkdirSync(join(workspace, 'showcase'));
      writeFileSync(
        join(workspace, 'showcase', '.env'),
        "# Pasted from the provider's page\nOPENAI_BASE_URL=https://api.example.com/v1/v1\nOPENAI_MODEL=gpt-4o-mini\n",
      );
      writeFileSync(
        join(workspace, 'client.py'),
        `from openai import OpenAI\n\nclient = OpenAI(api_key="${FAKE_KEY}")\n`,
      );
    });

    // The next suites see the session's workspace as it was.
    afterAll(() => {
      for (const f of FILES) rmSync(join(session().workspace, f), { recursive: true, force: true });
    });

    it('flags /v1/v1 in .env and the quick fix corrects it', async () => {
      let shot: string | undefined;
      const { workspace } = session();
      const run = await session().runPassing({
        suite: 'language-server/lsp',
        timeoutMs: 180_000,
        // No proxy: this suite is about the editor, not the upstream.
        settings: { 'loopgate.proxy.autoStart': false },
        afterResults: async (page) => {
          // What a user sees: the squiggle under the URL and the hover that explains it.
          const hover = page.locator('.monaco-hover', { hasText: '/v1' }).first();
          await hover.waitFor({ state: 'visible', timeout: 20_000 });
          shot = await screenshot(page, 'lsp-inline-diagnostic');
          keepForReadme(shot, 'inline-diagnostic.png');
        },
      });
      const byName = Object.fromEntries(run.results.map((r) => [r.name, r.status]));
      expect(byName['a duplicated /v1 in .env is flagged and its quick fix corrects the text']).toBe('passed');
      expect(statSync(shot!).size).toBeGreaterThan(10_000);
      // The fix was saved: the file on disk is corrected.
      expect(readFileSync(join(workspace, '.env'), 'utf8')).toBe('OPENAI_BASE_URL=https://example.test/v1\n');
      expect(readFileSync(join(workspace, 'client.py'), 'utf8')).toBe(
        'import os\nfrom openai import OpenAI\n\nclient = OpenAI(api_key=os.environ["OPENAI_API_KEY"])\n',
      );
      // Canary: the key never reached code-server's log, VS Code's logs or the language client's output channel.
      expect(secretsIn(readLogs(session().logPaths), [FAKE_KEY])).toEqual([]);
    }, 240_000);
  });
}
