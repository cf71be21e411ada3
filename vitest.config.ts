import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Vitest keeps each file's last duration here and starts the longest first (a short tail on two workers): in
  // .cache/, git-ignored, so `npm ci` (which empties node_modules) does not lose it.
  cacheDir: '.cache/vite',
  test: {
    include: ['test/**/*.test.ts'],
    // e2e (real VS Code) and bench run from their own commands: see README. The live tier (`*.live.test.ts`: the
    // real agent binaries) runs from `npm run test:live` (vitest.live.config.ts).
    exclude: ['test/e2e/**', 'test/bench/**', 'test/**/*.live.test.ts', 'node_modules/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One module graph per worker, not per file: importing the proxy's graph afresh for each of ~240 files was about
    // 1.1 s a file, over half of the run (with isolation 7–8 minutes on 2 cores, without it under 4). Files share no
    // state through modules: each starts its own proxies, simulators and temp homes (test/kit), and the whole suite
    // passes in any order (docs/development.md, "How long the tests take").
    isolate: false,
    // Vitest's default is one worker fewer than the cores: one on a 2-core machine. Most files wait on sockets and
    // child processes, not the CPU: two workers took the whole suite from about 12.5 to about 8 minutes there (docs/development.md).
    maxWorkers: Math.max(2, availableParallelism()),
    globalSetup: ['test/global-setup.ts'],
  },
});
