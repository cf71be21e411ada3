// vitest config for the real-VS-Code suites; `node test/e2e/run.mjs` uses it.
import { resolve } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The files that boot a VS Code of their own (extension.test.ts: a key in settings.json before the start;
 * models-view.test.ts: a key-less first activation): where they run is ownVsCodeTargets in
 * scripts/provision-e2e.mjs, the live tier's every target.
 */
const OWN_VSCODE_FILES = ['test/e2e/extension/extension.test.ts', 'test/e2e/extension/models-view.test.ts'];

export default defineConfig({
  test: {
    root: resolve(__dirname, '..', '..'),
    include: ['test/e2e/**/*.test.ts'],
    // The harness's own smoke suite (crashes, timeouts, orphans: four VS Code sessions) runs in the live tier, and
    // so do the files with a VS Code of their own where the run gives them no target (scripts/provision-e2e.mjs).
    exclude: [
      ...configDefaults.exclude,
      ...(process.env.LOOPGATE_TEST_TIER === 'live' ? [] : ['test/e2e/smoke/**']),
      ...(process.env.LOOPGATE_E2E_OWN_TARGETS ? [] : OWN_VSCODE_FILES),
    ],
    // One VS Code at a time: the machine has 2 cores.
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
