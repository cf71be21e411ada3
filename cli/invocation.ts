// How the user's shell reaches this CLI, for the commands Loopgate prints for
// them to run (the banner's token/env/curl lines). `loopgate` once it is
// installed as a command (`npm install -g .`, `npm link`, a packed tarball);
// otherwise `node /path/to/dist/cli.js`, which works from any directory.
// Never `npx loopgate`: outside the checkout npx would fetch whatever the
// registry holds under that name (with the local token in the same command line).
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { shellQuote } from '../rules/terminal/shell-quote.js';

export interface Invocation {
  /** What to type: `loopgate`, or `node '/abs/dist/cli.js'`. */
  command: string;
  /** True when `loopgate` on PATH is this very CLI. */
  installed: boolean;
  /** The command that puts this CLI on PATH as `loopgate` (the checkout or the unpacked package). */
  install: string;
}

export function cliInvocation(
  env: NodeJS.ProcessEnv,
  script = process.argv[1] ?? 'dist/cli.js',
  platform = process.platform,
): Invocation {
  const self = realpathOr(resolve(script));
  const packageDir = dirname(dirname(self));
  const installed = onPath(env, platform, self);
  return {
    command: installed ? 'loopgate' : `node ${shellQuote(self, platform === 'win32' ? 'windows' : 'posix')}`,
    installed,
    install: `npm install -g ${shellQuote(packageDir, platform === 'win32' ? 'windows' : 'posix')}`,
  };
}

function onPath(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, self: string): boolean {
  const dirs = (env.PATH ?? env.Path ?? '').split(platform === 'win32' ? ';' : delimiter).filter(Boolean);
  for (const dir of dirs) {
    // npm's Windows shims are .cmd files that cannot be resolved to their target: one on PATH is taken as ours.
    if (platform === 'win32') {
      if (existsSync(join(dir, 'loopgate.cmd'))) return true;
      continue;
    }
    const candidate = join(dir, 'loopgate');
    if (existsSync(candidate)) return realpathOr(candidate) === self;
  }
  return false;
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
