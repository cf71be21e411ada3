// Tests that spawn the CLI run the bundle in dist/: rebuild it once per run so
// it never lags behind the sources (`npm test` builds it before vitest and says so).
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  if (process.env.LOOPGATE_DIST_BUILT === '1') return;
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
