// Runs the README's blocks as a user pastes them, inside a network namespace of its own
// (`unshare --net`, started by readme-blocks.test.ts) so the README's 127.0.0.1:8787 is free
// whatever else runs on the machine: loopback up, the README's setup (`npm start`: the built
// CLI's serve, the way package.json's start script runs it), each step through bash, the proxy
// stopped. Prints the results as one JSON line. Plain Node: no test framework in here.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { cli, env, cwd, steps } = plan;
execFileSync('ip', ['link', 'set', 'lo', 'up']);

function waitFor(child, pattern, deadlineMs, what) {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${deadlineMs} ms:\n${text}`)), deadlineMs);
    const on = (chunk) => {
      text += chunk.toString();
      if (pattern.test(text)) {
        clearTimeout(timer);
        resolve(text);
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
  });
}

/** The README's setup: `npm start` is `node scripts/build.mjs && node --max-semi-space-size=4 dist/cli.js serve`; dist/ is built. */
const serve = spawn(process.execPath, ['--max-semi-space-size=4', cli, 'serve'], {
  env,
  cwd,
  stdio: ['ignore', 'pipe', 'pipe'],
});
const banner = await waitFor(serve, /Try it:\n.*curl.*\n/, 30_000, 'banner');

async function sh(command, timeoutMs) {
  const child = spawn('bash', ['-c', command], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise((resolve) => child.once('close', (c, signal) => resolve(c ?? `signal ${signal}`)));
  clearTimeout(timer);
  return { code, out, err };
}

/** A user's request through the proxy, for the blocks that name a request ID; its ID. */
async function chat(model) {
  const token = (await sh(`${JSON.stringify(process.execPath)} ${JSON.stringify(cli)} token`, 10_000)).out.trim();
  const res = await fetch('http://127.0.0.1:8787/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  return res.headers.get('x-loopgate-request-id');
}

const results = [];
for (const step of steps) {
  let command = step.command;
  if (step.requestId) command = command.replaceAll(step.requestId, (await chat('gpt-4o-mini')).slice(0, 8));
  if (step.follow) {
    // A command that follows until Ctrl+C: it must show a failure sent while it runs, then stop on SIGINT with 0.
    const child = spawn('bash', ['-c', `exec ${command}`], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const closed = new Promise((resolve) => child.once('close', (c, signal) => resolve(c ?? `signal ${signal}`)));
    const seen = { out: '' };
    child.stdout.on('data', (c) => (seen.out += c));
    const deadline = Date.now() + 20_000;
    while (!seen.out.includes(step.follow) && Date.now() < deadline) {
      await chat('no-such-model-for-the-readme');
      await new Promise((r) => setTimeout(r, 200));
    }
    child.kill('SIGINT');
    // Ended by the Ctrl+C it was sent, as in a terminal: that is its normal end.
    const code = await closed;
    results.push({ id: step.id, code: code === 'signal SIGINT' ? 0 : code, out: seen.out, err: '' });
    continue;
  }
  results.push({ id: step.id, ...(await sh(command, step.timeoutMs ?? 60_000)) });
}
serve.kill('SIGINT');
await new Promise((resolve) => serve.once('close', resolve));
process.stdout.write(JSON.stringify({ banner, results }) + '\n');
