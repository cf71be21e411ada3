// The detail panel's cache line, context bar and "Compare with previous turn"
// in real VS Code, in both targets, against a simulator this process starts
// (forensics.ext.ts, run in the target's editor session: editor.test.ts).
import { describe, it } from 'vitest';
import { simulatorForSuite } from '../harness/suite-simulator.js';
import type { CodeServerTarget } from '../harness/index.js';
import type { EditorSession } from '../harness/editor-session.js';

export function forensicsSuite(target: CodeServerTarget, session: () => EditorSession): void {
  describe(`cache forensics in the detail panel (${target} VS Code)`, () => {
    const sim = simulatorForSuite();

    it('names the changed block and opens the diff at it', async () => {
      await session().runPassing({
        suite: 'traffic/forensics',
        timeoutMs: 180_000,
        settings: { 'loopgate.baseUrl': sim().baseUrl },
      });
    }, 240_000);
  });
}
