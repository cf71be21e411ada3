#!/usr/bin/env node
// `npm run test:live`, the second tier (docs/development.md, "Tiers"), after `pretest:live` provisioned it: the
// live vitest suites (vitest.live.config.ts: the real agent binaries, the README's agent lines), then every editor
// suite in the oldest VS Code the extension supports (`test/e2e/run.mjs --tier live`). Both run whatever the other
// gives, so one run shows every failure; the exit code is non-zero if either failed. vitest's global setup builds
// dist/ once, and the editor suites use that build.
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const step = (args) => spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' }).status ?? 1;
const vitest = step([join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', 'vitest.live.config.ts']);
const e2e = step([join(root, 'test', 'e2e', 'run.mjs'), '--tier', 'live', '--no-build']);
process.stdout.write(
  `\nnpm run test:live: vitest ${vitest === 0 ? 'passed' : 'FAILED'}, e2e ${e2e === 0 ? 'passed' : 'FAILED'}\n`,
);
process.exit(vitest === 0 && e2e === 0 ? 0 : 1);
