// Loopgate's models in VS Code's own language-model API, in the newest VS Code
// (the current target, 1.104+ API), against a simulator this process starts
// with slow streams (so a cancel lands mid-stream). chat.ext.ts runs in the
// current target's editor session (editor.test.ts), AI features on for it.
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keepForReadme, screenshot } from '../harness/index.js';
import type { EditorSession } from '../harness/editor-session.js';
import { simulatorForSuite } from '../harness/suite-simulator.js';

export function chatSuite(session: () => EditorSession): void {
  describe('Loopgate models in VS Code chat (current VS Code)', () => {
    const sim = simulatorForSuite({ streamDefaults: { chunkDelayMs: 40, chunks: 8 } });

    it('lists, streams, calls tools, cancels and explains a refused key through vscode.lm', async () => {
      let shot: string | undefined;
      const run = await session().runPassing({
        suite: 'chat/chat',
        timeoutMs: 240_000,
        settings: { 'loopgate.baseUrl': sim().baseUrl },
        editorSettings: { 'chat.disableAIFeatures': false },
        afterResults: async (page) => {
          shot = await screenshot(page, 'chat-vscode-lm');
          keepForReadme(shot, 'chat-model.png');
        },
      });
      expect(run.vscodeVersion).toMatch(/^1\.1[0-9]{2}\./);
      expect(Number(run.vscodeVersion.split('.')[1])).toBeGreaterThanOrEqual(104);
      expect(run.passed).toBe(7);
      expect(statSync(shot!).size).toBeGreaterThan(10_000);
    }, 300_000);
  });
}
