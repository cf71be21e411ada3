// Child processes for the bench: start, wait for their "listening on" line,
// sample their memory/CPU from /proc, and make sure they all die with us.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const children = new Set();
const LOAD = fileURLToPath(new URL('./load.mjs', import.meta.url));
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

export function killAll() {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  children.clear();
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    killAll();
    process.exit(130);
  });
}

/** Spawns a long-running server and resolves with its URL once `ready` matches a stdout line. */
export function startServer(name, args, { env = process.env, ready, timeoutMs = 15_000 } = {}) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stderr = '';
  // Always drained: a full pipe would stall the server under test.
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${timeoutMs} ms`)), timeoutMs);
    const fail = (err) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${err.message}\n${stderr}`));
    };
    child.once('exit', (code) => fail(new Error(`${name} exited with ${code} before listening`)));
    child.stdout.on('data', function onData(d) {
      out += d;
      const m = ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout.off('data', onData);
      child.stdout.resume();
      resolve({ name, url: m[1], pid: child.pid, child, stop: () => stopChild(child) });
    });
  });
}

function stopChild(child) {
  children.delete(child);
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Runs one load job in its own process; rejects if it fails or overruns. */
export function runLoad(job, timeoutMs) {
  const child = spawn(process.execPath, [LOAD], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
  child.stdin.end(JSON.stringify(job));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      if (code !== 0) return reject(new Error(`load generator (${job.mode}) exited with ${code}: ${err}`));
      resolve(JSON.parse(out));
    });
  });
}

export function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** utime + stime in ms. */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** Samples a process while `work` runs: RSS before and at peak, CPU used, wall time. */
export async function measured(pid, work) {
  if (!pid) {
    const t0 = performance.now();
    return { result: await work(), wallMs: performance.now() - t0 };
  }
  const rssBefore = rssBytes(pid);
  let rssPeak = rssBefore;
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  const poll = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, rssBytes(pid));
    } catch {
      /* the process is gone; the run will report the failure */
    }
  }, 20);
  try {
    const result = await work();
    rssPeak = Math.max(rssPeak, rssBytes(pid));
    return { result, wallMs: performance.now() - t0, rssBefore, rssPeak, cpuMs: cpuMs(pid) - cpu0 };
  } finally {
    clearInterval(poll);
  }
}
