import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // e2e (real VS Code) and bench run from their own commands: see README. The live tier (`*.live.test.ts`: the
    // real agent binaries) runs from `npm run test:live` (vitest.live.config.ts).
    exclude: ['test/e2e/**', 'test/bench/**', 'test/**/*.live.test.ts', 'node_modules/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one on a 2-core machine. Most files wait on sockets and
    // child processes, not the CPU: two workers took the whole suite from about 12.5 to about 8 minutes there (docs/development.md).
    maxWorkers: Math.max(2, availableParallelism()),
    globalSetup: ['test/global-setup.ts'],
  },
});
