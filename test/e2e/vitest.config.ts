// vitest config for the real-VS-Code suites; `node test/e2e/run.mjs` uses it.
import { resolve } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: resolve(__dirname, '..', '..'),
    include: ['test/e2e/**/*.test.ts'],
    // The harness's own smoke suite (crashes, timeouts, orphans: four VS Code sessions) runs in the live tier.
    exclude: [...configDefaults.exclude, ...(process.env.LOOPGATE_TEST_TIER === 'live' ? [] : ['test/e2e/smoke/**'])],
    // One VS Code at a time: the machine has 2 cores.
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
