// The editor suites that share one VS Code per target: one code-server, one
// Chromium and one extension host run each suite of build-entries.mjs
// SESSION_SUITES in turn, after a fresh start, and each suite's test below
// asserts on that suite's own results and drives the UI in its state. The
// files that need a VS Code of their own (smoke: the harness's own crashes and
// timeouts; extension.test.ts: a key in settings.json before VS Code starts;
// models-view.test.ts: a first activation with AI features on from the start)
// or none (package.test.ts) say why (docs/development.md).
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { startEditorSession, type EditorSession } from './harness/editor-session.js';
import { repoRoot, runTargets } from './harness/paths.js';
import { chatSuite } from './chat/chat.suite.js';
import { extensionSuite } from './extension/extension.suite.js';
import { lspSuite } from './language-server/lsp.suite.js';
import { sessionsSuite } from './sessions/sessions.suite.js';
import { cassettesFaultsSuite } from './traffic/cassettes-faults.suite.js';
import { forensicsSuite } from './traffic/forensics.suite.js';
import { trafficListSuite } from './traffic/traffic-list.suite.js';
import { trafficSuite } from './traffic/traffic.suite.js';

const env = {
  // The real Claude Code the live tier provisions (or the build LOOPGATE_TEST_CLAUDE names), for traffic.ext.ts.
  LOOPGATE_TEST_CLAUDE_BIN:
    process.env.LOOPGATE_TEST_CLAUDE ?? join(repoRoot, '.cache', 'agents', 'node_modules', '.bin', 'claude'),
  LOOPGATE_TEST_TIER: process.env.LOOPGATE_TEST_TIER ?? 'first',
};

for (const target of runTargets()) {
  describe(`one extension host for the editor suites (${target} VS Code)`, () => {
    let session: EditorSession | undefined;

    beforeAll(async () => {
      session = await startEditorSession({ target, env });
    }, 240_000);

    afterAll(async () => {
      await session?.close();
    }, 60_000);

    const current = (): EditorSession => {
      if (!session) throw new Error(`the ${target} editor session did not start: see the hook error above`);
      return session;
    };
    forensicsSuite(target, current);
    sessionsSuite(target, current);
    trafficSuite(target, current);
    trafficListSuite(target, current);
    cassettesFaultsSuite(target, current);
    lspSuite(target, current);
    extensionSuite(target, current);
    // Last: it turns VS Code's AI features on for its run. The Language Model Chat Provider API is 1.104+.
    if (target === 'current') chatSuite(current);
  });
}
