// What the provisioning scripts (provision-e2e, provision-clients) share: a logged
// command runner and a folder lock.
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Runs a command with its output going to `logFile`; on failure the error carries
 * the log's tail so the cause is visible without digging.
 */
export function runLogged(logFile, cmd, args, opts = {}) {
  appendFileSync(logFile, `\n$ (cd ${opts.cwd ?? process.cwd()}) ${cmd} ${args.join(' ')}\n`);
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail = [];
    const onData = (chunk) => {
      appendFileSync(logFile, chunk);
      tail.push(chunk.toString());
      if (tail.length > 40) tail.shift();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolveRun();
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code} (full log: ${logFile})\n${tail.join('').slice(-3000)}`));
    });
  });
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
export async function withDirLock(lockDir, fn, { deadlineMs = 15 * 60_000, pollMs = 1000 } = {}) {
  mkdirSync(dirname(lockDir), { recursive: true });
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let owner = NaN;
      try { owner = Number(readFileSync(join(lockDir, 'pid'), 'utf8')); } catch { /* being written */ }
      if (Number.isInteger(owner) && !pidAlive(owner)) {
        rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another provisioning (pid ${owner}) holds ${lockDir} for too long`);
      await new Promise((r) => setTimeout(r, pollMs)); // poll interval while another process provisions
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}
