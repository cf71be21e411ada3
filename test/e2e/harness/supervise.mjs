#!/usr/bin/env node
// `node supervise.mjs [--cleanup DIR] CMD ARGS...`: runs CMD in its own
// process group and takes the whole group down (VS Code's extension host, pty
// host, watchers) when our stdin closes: the harness closing it, or the test
// process dying in any way, even SIGKILL. Exits once CMD has exited, with its
// code. If stdin closed without the harness first writing "close\n" (it
// died), DIR is removed too, since nobody else will.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';

let argv = process.argv.slice(2);
let cleanupDir;
if (argv[0] === '--cleanup') {
  cleanupDir = argv[1];
  argv = argv.slice(2);
}
const [cmd, ...args] = argv;
if (!cmd) {
  process.stderr.write('usage: node supervise.mjs [--cleanup DIR] CMD [ARGS...]\n');
  process.exit(2);
}
let orderly = false;
const child = spawn(cmd, args, { detached: true, stdio: ['ignore', 'inherit', 'inherit'] });
const killGroup = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* group already gone */
  }
};

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  killGroup('SIGTERM');
  // A server that ignores SIGTERM still goes.
  setTimeout(() => killGroup('SIGKILL'), 5_000).unref();
}

child.on('error', (err) => {
  process.stderr.write(`supervise: cannot start ${cmd}: ${err.message}\n`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  killGroup('SIGKILL'); // children that outlived the leader
  if (cleanupDir && stopping && !orderly) rmSync(cleanupDir, { recursive: true, force: true });
  process.exit(code ?? (signal ? 128 : 1));
});
let input = '';
process.stdin.on('data', (chunk) => {
  input += chunk;
  if (input.includes('close\n')) orderly = true;
});
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, stop);
