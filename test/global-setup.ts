// Tests that spawn the CLI run the bundle in dist/: rebuild it once per run so
// it never lags behind the sources.
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
