// The soak: many requests, streamed and not, a fifth of them abandoned by the
// client at a random moment (before the answer, or in the middle of a stream).
// What must hold afterwards: no error for the clients that stayed, exactly one
// log record per request, and the proxy's memory, descriptors and sockets back
// where they were once it is idle. Runs against a plain `loopgate serve` with
// the metadata log, in front of the simulator.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { rssBytes, startServer } from './procs.mjs';

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

/** Open descriptors of a process, and how many of them are sockets. */
function descriptors(pid) {
  const dir = `/proc/${pid}/fd`;
  let fds = 0;
  let sockets = 0;
  for (const fd of readdirSync(dir)) {
    fds++;
    try {
      if (readlinkSync(join(dir, fd)).startsWith('socket:')) sockets++;
    } catch {
      // closed while we looked
    }
  }
  return { fds, sockets };
}

function snapshot(pid) {
  return { rssMB: Math.round(rssBytes(pid) / 2 ** 17) / 8, ...descriptors(pid) };
}

function countRecords(file) {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

/** Polls `check` until it returns a value or the deadline passes (then the last value). */
async function settle(check, deadlineMs, everyMs = 100) {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = check();
    if (v.done || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * One soak run. `cli`: dist/cli.js; `simUrl`: a running simulator; `key`: its
 * demo key (given to the proxy in its environment only). Returns the report.
 */
export async function runSoak({ cli, simUrl, key, env, logFile, requests, concurrency = 48, abortShare = 0.2 }) {
  const proxy = await startServer(
    'loopgate-soak',
    [cli, 'serve', '--upstream', simUrl, '--port', '0', '--no-token', '--quiet', '--log', logFile],
    {
      env: { ...env, LOOPGATE_API_KEY: key, LOOPGATE_UPSTREAM: '' },
      ready: LISTENING,
    },
  );
  const agent = new Agent({ connections: concurrency, keepAliveTimeout: 2000 });
  const chat = (stream, n) =>
    JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: `soak ${n}` }],
      ...(stream ? { stream: true } : {}),
    });
  // A fixed seed: the same mix every run.
  let seed = 0x5eed;
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;

  const stats = { sent: 0, completed: 0, aborted: 0, clientErrors: 0, firstError: undefined };
  async function one(n) {
    const stream = random() < 0.5;
    const abort = random() < abortShare;
    const where = random(); // before the answer (< 0.5) or after the first bytes of it
    const controller = new AbortController();
    stats.sent++;
    try {
      const res = await request(`${proxy.url}/v1/chat/completions`, {
        method: 'POST',
        dispatcher: agent,
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          ...(stream ? { 'x-sim-chunks': '8', 'x-sim-chunk-delay-ms': '3' } : {}),
        },
        body: chat(stream, n),
      });
      if (abort && where < 0.5) {
        controller.abort();
        await res.body.dump().catch(() => undefined);
        stats.aborted++;
        return;
      }
      let first = true;
      for await (const _ of res.body) {
        if (abort && first) {
          controller.abort();
          break;
        }
        first = false;
      }
      if (abort) {
        stats.aborted++;
        return;
      }
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
      stats.completed++;
    } catch (err) {
      if (abort || controller.signal.aborted) {
        stats.aborted++;
        return;
      }
      stats.clientErrors++;
      stats.firstError ??= String(err?.message ?? err).slice(0, 200);
    }
  }

  // Warm up (JIT, pools), then the "before" figures.
  const WARMUP = 50;
  for (let i = 0; i < WARMUP; i++) await one(-i).catch(() => undefined);
  const warmed = { ...stats };
  // The log is written in the background: count from once the warm-up's records are all there.
  const recordsBefore = (
    await settle(() => ({ n: countRecords(logFile), done: countRecords(logFile) >= WARMUP }), 10_000)
  ).n;
  const before = snapshot(proxy.pid);

  const began = performance.now();
  let next = 0;
  const soakStats = { sent: 0 };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        const n = next++;
        soakStats.sent++;
        await one(n);
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  const after = snapshot(proxy.pid);
  await agent.close();

  // Idle: the clients are gone; wait for the log to hold every record, the
  // proxy's count of requests in flight to reach 0 and its sockets to close
  // (keep-alive timeouts: 5 s towards clients, the simulator's towards the pool).
  const statsUrl = `${proxy.url}/_loopgate/stats`;
  const expected = recordsBefore + requests;
  const idleBegan = Date.now();
  const idleState = await settle(() => {
    const now = snapshot(proxy.pid);
    const records = countRecords(logFile);
    return {
      ...now,
      records,
      done: records >= expected && now.sockets <= before.sockets + 2 && now.fds <= before.fds + 2,
    };
    // The proxy keeps idle upstream connections for 30 s (its pool's keep-alive), so idle comes after that.
  }, 45_000);
  const inFlight = (await (await fetch(statsUrl)).json()).inFlight;
  const idle = {
    rssMB: idleState.rssMB,
    fds: idleState.fds,
    sockets: idleState.sockets,
    afterS: Math.round((Date.now() - idleBegan) / 100) / 10,
  };
  const records = countRecords(logFile) - recordsBefore;
  await proxy.stop();
  return {
    requests,
    concurrency,
    abortShare,
    seconds: Math.round(seconds * 10) / 10,
    rps: Math.round(requests / seconds),
    completed: stats.completed - warmed.completed,
    aborted: stats.aborted - warmed.aborted,
    clientErrors: stats.clientErrors - warmed.clientErrors,
    firstError: stats.firstError,
    records,
    // The health check above is one request more, logged after the count.
    inFlightIdle: inFlight - 1,
    before,
    after,
    idle,
  };
}
