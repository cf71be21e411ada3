// Load generator, one process per run so it never shares an event loop with
// the process under test. Reads one JSON job on stdin (stdin, not argv: the job
// carries the simulator's key for direct runs), prints one JSON result.
import { Pool } from 'undici';
import { performance } from 'node:perf_hooks';

const job = JSON.parse(await readStdin());
const pool = new Pool(job.url, {
  connections: job.connections ?? job.concurrency ?? 1,
  pipelining: 1,
  keepAliveTimeout: 30_000,
});
const round = (ms) => Math.round(ms * 1000) / 1000;
let firstError;

function noteError(msg) {
  firstError ??= String(msg).slice(0, 300);
}

async function readStdin() {
  let s = '';
  for await (const chunk of process.stdin) s += chunk;
  return s;
}

/**
 * Loopgate's own time from a W3C Server-Timing header (`loopgate;dur=0.12,
 * upstream;dur=0.3`, possibly followed by the upstream's own entries), in ms;
 * undefined when the header or the entry or its dur is missing or malformed.
 */
function loopgateDur(header) {
  if (header === undefined) return undefined;
  for (const entry of (Array.isArray(header) ? header.join(',') : String(header)).split(',')) {
    const [name, ...params] = entry.split(';');
    if (name.trim().toLowerCase() !== 'loopgate') continue;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k.trim().toLowerCase() !== 'dur' || v === undefined) continue;
      const ms = Number(v.trim().replace(/^"|"$/g, ''));
      return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
    }
    return undefined;
  }
  return undefined;
}

/** One request, body read to the end. Returns latency in ms (and Loopgate's Server-Timing dur if asked), or undefined on failure. */
async function once(extraHeaders = {}, body = job.body, { timing = false } = {}) {
  const t0 = performance.now();
  try {
    const res = await pool.request({
      path: job.path,
      method: 'POST',
      headers: { ...job.headers, ...extraHeaders },
      body,
    });
    let bytes = 0;
    for await (const chunk of res.body) bytes += chunk.length;
    if (res.statusCode !== 200) {
      noteError(`HTTP ${res.statusCode}`);
      return undefined;
    }
    return { ms: performance.now() - t0, bytes, own: timing ? loopgateDur(res.headers['server-timing']) : undefined };
  } catch (err) {
    noteError(err.message);
    return undefined;
  }
}

/** Sequential requests at concurrency 1: per-request latency. */
async function latency() {
  for (let i = 0; i < job.warmup; i++) await once();
  const samples = [];
  const serverTiming = [];
  let errors = 0;
  const deadline = performance.now() + job.maxMs;
  for (let i = 0; i < job.requests && performance.now() < deadline; i++) {
    const r = await once(undefined, undefined, { timing: true });
    if (r) samples.push(round(r.ms));
    else errors++;
    if (r?.own !== undefined) serverTiming.push(r.own);
  }
  return { samples, serverTiming, errors };
}

/** `concurrency` closed loops for a fixed time; only the window after warm-up counts. */
async function throughput() {
  const start = performance.now();
  const measureFrom = start + job.warmupMs;
  const end = measureFrom + job.durationMs;
  let completed = 0;
  let errors = 0;
  let all = 0;
  // job.requests, when given, stops the loops after that many requests (a fixed amount of work).
  const loop = async () => {
    while (performance.now() < end && (job.requests === undefined || all < job.requests)) {
      const r = await once();
      all++;
      if (performance.now() < measureFrom) continue;
      if (r) completed++;
      else errors++;
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, loop));
  return { rps: completed / (job.durationMs / 1000), completed, errors, all };
}

/**
 * `streams` concurrent SSE requests, `repeat` times. Records the time to the
 * first body byte, each event's arrival time (an event ends at a blank line),
 * and how many events arrived glued to another in one read.
 */
async function sse() {
  const ttfb = [];
  const gaps = [];
  const events = [];
  let coalesced = 0;
  let errors = 0;
  const one = async () => {
    const t0 = performance.now();
    try {
      const res = await pool.request({ path: job.path, method: 'POST', headers: job.headers, body: job.body });
      if (res.statusCode !== 200) {
        noteError(`HTTP ${res.statusCode}`);
        await res.body.dump();
        errors++;
        return;
      }
      let count = 0;
      let last;
      let prevNewline = false;
      for await (const chunk of res.body) {
        const now = performance.now();
        if (last === undefined) ttfb.push(round(now - t0));
        let inChunk = 0;
        for (let i = 0; i < chunk.length; i++) {
          const nl = chunk[i] === 10;
          if (nl && prevNewline) inChunk++;
          prevNewline = nl && !prevNewline ? true : false;
        }
        if (inChunk > 0) {
          if (last !== undefined && count > 0) gaps.push(round(now - last));
          last = now;
          count += inChunk;
          coalesced += inChunk - 1;
        } else if (last === undefined) {
          last = now;
        }
      }
      events.push(count);
    } catch (err) {
      noteError(err.message);
      errors++;
    }
  };
  const deadline = performance.now() + job.maxMs;
  // Starts are spread over rampMs (a schedule, not a wait): every stream is open
  // at the peak, and TTFB measures the proxy under that load rather than the
  // accept queue of a thousand simultaneous connects.
  const ramp = job.rampMs ?? 0;
  const staggered = (i) =>
    ramp ? new Promise((resolve) => setTimeout(resolve, (i * ramp) / job.streams)).then(one) : one();
  for (let r = 0; r < job.repeat && performance.now() < deadline; r++) {
    await Promise.all(Array.from({ length: job.streams }, (_, i) => staggered(i)));
  }
  return {
    ttfb,
    gaps,
    events: { min: Math.min(...events), max: Math.max(...events), streams: events.length },
    coalesced,
    errors,
  };
}

/** One large request body, generated as it is sent (the generator's memory stays flat). */
async function bigRequest() {
  const prefix = Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"');
  const suffix = Buffer.from('"}]}');
  const block = Buffer.alloc(64 * 1024, 'a');
  const fill = job.bytes - prefix.length - suffix.length;
  async function* body() {
    yield prefix;
    for (let left = fill; left > 0; left -= block.length) yield left >= block.length ? block : block.subarray(0, left);
    yield suffix;
  }
  const r = await once({ 'content-length': String(job.bytes) }, body());
  return r ? { ms: round(r.ms), bytes: job.bytes, errors: 0 } : { errors: 1 };
}

async function bigResponse() {
  const r = await once({ 'x-sim-response-bytes': String(job.bytes) });
  return r ? { ms: round(r.ms), bytes: r.bytes, errors: 0 } : { errors: 1 };
}

const modes = { latency, throughput, sse, bigRequest, bigResponse };
const run = modes[job.mode];
if (!run) throw new Error(`unknown mode ${job.mode}`);
const result = await run();
await pool.destroy();
process.stdout.write(JSON.stringify({ ...result, firstError }));
