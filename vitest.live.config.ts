// `npm run test:live`, the second tier: what is too slow for a first `npm test` (docs/development.md, "Tiers"):
// the real agent binaries (`*.live.test.ts`), and the README's blocks again, now with the agent lines run
// (LOOPGATE_TEST_TIER=live). Everything else as in vitest.config.ts.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    // Replaced, not added to (vitest's mergeConfig would concatenate the lists).
    include: ['test/**/*.live.test.ts', 'test/docs/readme-blocks.test.ts'],
    exclude: ['test/e2e/**', 'test/bench/**', 'node_modules/**'],
    env: { LOOPGATE_TEST_TIER: 'live' },
  },
});
