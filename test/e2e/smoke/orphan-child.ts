// A test process that starts code-server and is then killed with SIGKILL by
// smoke.test.ts: prints where its server is, then idles until killed.
import { startCodeServer } from '../harness/code-server.js';

void (async () => {
  const server = await startCodeServer({ workspace: process.argv[2]!, label: 'orphan-child' });
  process.stdout.write(`${JSON.stringify({ port: server.port, userDataDir: server.userDataDir })}\n`);
  setInterval(() => {}, 60_000); // keeps the process alive until it is killed
})();
