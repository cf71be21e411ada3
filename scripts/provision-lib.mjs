// What the provisioning scripts (provision-e2e, provision-clients, provision-agents) share:
// a logged command runner, timed steps with a heartbeat, a folder lock, and the recipe for
// an npm tree installed from a lockfile of its own into .cache/.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** How often a running step says it is still running: a silent minute reads as a hang. */
export const HEARTBEAT_MS = 10_000;

const lastLines = new Map(); // log file -> last non-empty output line, for the heartbeat

/**
 * Runs a command with its output going to `logFile`; on failure the error carries
 * the log's tail so the cause is visible without digging.
 */
export function runLogged(logFile, cmd, args, opts = {}) {
  appendFileSync(logFile, `\n$ (cd ${opts.cwd ?? process.cwd()}) ${cmd} ${args.join(' ')}\n`);
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail = [];
    const onData = (chunk) => {
      appendFileSync(logFile, chunk);
      const text = chunk.toString();
      tail.push(text);
      if (tail.length > 40) tail.shift();
      const line = text
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .pop();
      if (line) lastLines.set(logFile, line);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolveRun();
      else
        reject(
          new Error(`${cmd} ${args.join(' ')} exited ${code} (full log: ${logFile})\n${tail.join('').slice(-3000)}`),
        );
    });
  });
}

const secs = (ms) => `${(ms / 1000).toFixed(1)}s`;

/**
 * Timed steps for one provisioning script: each step says when it starts and ends,
 * says it is still running every HEARTBEAT_MS (with the log's last line, so a long
 * compile shows what it is compiling), and summary() lists what each step cost.
 * Steps may run side by side; the summary then adds up to more than the wall time.
 */
export function createSteps(tag, logFile, stream = process.stdout) {
  const say = (msg) => stream.write(`[${tag}] ${msg}\n`);
  const done = [];
  const t0 = Date.now();
  return {
    say,
    async run(name, fn) {
      const start = Date.now();
      if (logFile) lastLines.delete(logFile); // the heartbeat shows this step's output, not the last one's
      say(`${name} ...`);
      const beat = setInterval(() => {
        const last = logFile ? lastLines.get(logFile) : undefined;
        say(
          `  still running: ${name} (${secs(Date.now() - start)})${last ? `, last output: ${last.slice(0, 100)}` : ''}`,
        );
      }, HEARTBEAT_MS);
      try {
        return await fn();
      } finally {
        clearInterval(beat);
        const ms = Date.now() - start;
        done.push([name, ms]);
        say(`${name} done in ${secs(ms)}`);
      }
    },
    summary() {
      if (done.length === 0) return;
      const width = Math.max(...done.map(([n]) => n.length));
      say(`what it cost (${secs(Date.now() - t0)} wall time):`);
      for (const [name, ms] of done) say(`  ${name.padEnd(width)}  ${secs(ms).padStart(7)}`);
    },
  };
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Two runs may start at once (pretest and a test's own check, or two test runs): the
 * second waits for the first's result instead of running npm into the same folder
 * concurrently. A lock whose owner died is taken over.
 */
export async function withDirLock(lockDir, fn, { deadlineMs = 15 * 60_000, pollMs = 1000, onWait } = {}) {
  mkdirSync(dirname(lockDir), { recursive: true });
  const deadline = Date.now() + deadlineMs;
  let told = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let owner = NaN;
      try {
        owner = Number(readFileSync(join(lockDir, 'pid'), 'utf8'));
      } catch {
        /* being written */
      }
      if (Number.isInteger(owner) && !pidAlive(owner)) {
        rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another provisioning (pid ${owner}) holds ${lockDir} for too long`);
      if (!told) onWait?.(owner);
      told = true;
      await new Promise((r) => setTimeout(r, pollMs)); // poll interval while another process provisions
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

/**
 * An npm tree in `dir` with exactly `packages` (name -> exact version), installed with
 * `npm ci` from `lockFile` (committed), so every run gets the same transitive versions.
 * `updateLock` re-resolves the tree and rewrites `lockFile` after a pin changes.
 * Install scripts are not run; `afterInstall({ run, steps })` does what a tree needs instead.
 * A manifest holding the recipe makes a warm run ~instant; `--prefer-offline` lets a
 * redo come from the npm cache (tarballs are checked against the lockfile's integrity).
 */
/**
 * Drops from a lockfile the optional dependencies that `npm install` could not resolve.
 * Why: a package may name platform builds the registry lacks (opencode-ai 1.18.33 names
 * twelve, the registry serves two); `npm install` skips them quietly, but `npm ci` then
 * refuses the lock ("Missing: opencode-darwin-arm64@ from lock file"). Leaving them out
 * only says what install already did.
 */
export function pruneUnresolvedOptionals(lock) {
  const names = Object.keys(lock.packages ?? {});
  for (const entry of Object.values(lock.packages ?? {})) {
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
      if (!names.some((k) => k === `node_modules/${dep}` || k.endsWith(`/node_modules/${dep}`)))
        delete entry.optionalDependencies[dep];
    }
  }
  return lock;
}

export function npmTree({
  tag,
  dir,
  packages,
  lockFile,
  recipe,
  logFile,
  extraFiles = {},
  afterInstall,
  check = () => true,
  stream = process.stdout,
  source = `scripts/provision-${tag}.mjs`,
}) {
  const manifestFile = join(dir, 'manifest.json');
  const lockHash = () =>
    existsSync(lockFile) ? createHash('sha256').update(readFileSync(lockFile)).digest('hex') : 'none';
  const markerText = () => JSON.stringify({ recipe, packages, lock: lockHash() });
  // .cache may be a symlink to a folder shared by several worktrees: the manifest names the real folder, so
  // its paths stay valid when the worktree that provisioned it is deleted.
  const realDir = () => realpathSync(dir);
  const readManifest = () => {
    try {
      return JSON.parse(readFileSync(manifestFile, 'utf8'));
    } catch {
      return undefined;
    }
  };
  const installed = (m) => m?.marker === markerText() && check();
  /** The manifest's paths lead to this tree (not a copied or deleted folder's). */
  const pointsHere = (m) => {
    try {
      return realpathSync(m.dir) === realDir();
    } catch {
      return false;
    }
  };
  const isProvisioned = () => {
    const m = readManifest();
    return installed(m) && pointsHere(m);
  };
  /** The manifest with `dir` and every path under it rewritten to the tree's real folder. */
  const manifestFor = (extraManifest) => {
    const real = realDir();
    const relocate = (v) => (typeof v === 'string' && v.startsWith(dir) ? real + v.slice(dir.length) : v);
    const extra = Object.fromEntries(Object.entries(extraManifest).map(([k, v]) => [k, relocate(v)]));
    return JSON.stringify({ marker: markerText(), dir: real, packages, ...extra }, null, 2) + '\n';
  };
  const lockDir = join(dirname(dir), `.provision-${tag}.lock`);
  const run = (cmd, args, opts) => runLogged(logFile, cmd, args, opts);

  let inFlight; // one provisioning per tree per process (e2e's `current` target and pretest both ask for the clients tree)
  function provision(opts = {}) {
    if (opts.force || opts.updateLock) return provisionNow(opts);
    inFlight ??= provisionNow(opts).finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  async function provisionNow({ force = false, updateLock = false, extraManifest = {}, quietWhenWarm = false } = {}) {
    const steps = createSteps(tag, logFile, stream);
    if (!force && !updateLock && isProvisioned()) {
      if (!quietWhenWarm) steps.say(`already provisioned in ${dir}`);
      return JSON.parse(readFileSync(manifestFile, 'utf8'));
    }
    if (!force && !updateLock && installed(readManifest())) {
      // The tree is right but its manifest names another folder (copied, or a deleted worktree's): its paths
      // would lead nowhere. Rewriting the manifest repairs that without reinstalling ~2 GB.
      const stale = readManifest().dir;
      await withDirLock(lockDir, async () => writeFileSync(manifestFile, manifestFor(extraManifest)));
      steps.say(`manifest named ${stale}; now ${realDir()} (tree already provisioned)`);
      return JSON.parse(readFileSync(manifestFile, 'utf8'));
    }
    const onWait = (pid) => steps.say(`waiting for another provisioning (pid ${pid}) of ${dir} ...`);
    await withDirLock(
      lockDir,
      async () => {
        if (!force && !updateLock && isProvisioned()) return;
        mkdirSync(dir, { recursive: true });
        steps.say(`provisioning ${dir} (log: ${logFile})`);
        writeFileSync(logFile, `provisioning started ${new Date().toISOString()}\n`);
        rmSync(manifestFile, { force: true });
        writeFileSync(
          join(dir, 'package.json'),
          JSON.stringify(
            {
              name: `loopgate-${tag}-cache`,
              private: true,
              description: `cache, see ${source}`,
              dependencies: packages,
            },
            null,
            2,
          ) + '\n',
        );
        for (const [name, text] of Object.entries(extraFiles)) writeFileSync(join(dir, name), text);
        const npmQuiet = ['--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];
        const treeLock = join(dir, 'package-lock.json');
        if (updateLock || !existsSync(lockFile)) {
          rmSync(treeLock, { force: true });
          await steps.run(`npm install (re-resolving ${basename(lockFile)})`, () =>
            run('npm', ['install', ...npmQuiet], { cwd: dir }),
          );
          writeFileSync(
            lockFile,
            JSON.stringify(pruneUnresolvedOptionals(JSON.parse(readFileSync(treeLock, 'utf8'))), null, 2) + '\n',
          );
        } else {
          copyFileSync(lockFile, treeLock);
          await steps.run('npm ci', () => run('npm', ['ci', '--prefer-offline', ...npmQuiet], { cwd: dir }));
        }
        if (afterInstall) await afterInstall({ run, steps });
        if (!check()) throw new Error(`provisioning of ${dir} finished but its check failed (log: ${logFile})`);
        writeFileSync(manifestFile, manifestFor(extraManifest));
      },
      { deadlineMs: 15 * 60_000, pollMs: 500, onWait },
    );
    steps.summary();
    return JSON.parse(readFileSync(manifestFile, 'utf8'));
  }

  return { dir, manifestFile, isProvisioned, provision };
}
