// The benchmark: what Loopgate costs against going direct and against two plain
// forwarders (http-proxy, and a bare undici one), measured side by side, interleaved round-robin so drift
// hits every target alike. Usage: node test/bench/run.mjs [--quick] [--out FILE]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { agentBody } from './agent-body.mjs';
import { killAll, measured, rssBytes, runLoad, startServer } from './procs.mjs';
import { CONFIGS } from './scenarios.mjs';
import { checks, renderMarkdown } from './report.mjs';
import { runSoak } from './soak.mjs';
import { pct } from './stats.mjs';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    out: { type: 'string' },
    only: { type: 'string' },
    compare: { type: 'string' },
  },
});
// --compare OTHER/dist/cli.js: also runs that build (metadata log) as target "loopgate@base", for before/after in one run.
const baseCli = values.compare;
const cfg = values.quick ? CONFIGS.quick : CONFIGS.full;
const only = values.only ? new Set(values.only.split(',')) : undefined;
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = join(root, 'dist/cli.js');
const fixture = JSON.parse(readFileSync(join(root, 'simulator/default-fixture.json'), 'utf8'));
// The simulator's demo key: the proxy gets it in its environment only, direct runs send it themselves.
const KEY = fixture.keys.find((k) => k.group === 'default' && k.status === 'active' && !k.rpm && !k.models).key;
const PATH = '/v1/chat/completions';
const tmp = mkdtempSync(join(tmpdir(), 'loopgate-bench-'));
const began = Date.now();
// Everything stops by itself, whatever hangs. BENCH_HARD_LIMIT_S raises the limit on a busy machine, where
// --compare and the c=1000 streams outlast the quick run's 240 s.
const hardLimitS = Number(process.env.BENCH_HARD_LIMIT_S) || cfg.hardLimitS;
const hardStop = setTimeout(() => {
  console.error(`bench: over the ${hardLimitS} s limit, stopping`);
  killAll();
  process.exit(1);
}, hardLimitS * 1000);
hardStop.unref();

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

// By default every server runs as a plain `node <script>`: no node flags, and no
// NODE_OPTIONS inherited from the shell (the c=1000 RSS target is for a plain
// `loopgate serve`). BENCH_NODE_FLAGS: node flags for the proxy children only,
// for experiments (e.g. --max-semi-space-size=4); the report records them and
// the RSS target then reads as missed, since it is no longer a plain serve.
const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const plainEnv = { ...process.env };
delete plainEnv.NODE_OPTIONS;

const proxyEnv = { ...plainEnv, LOOPGATE_API_KEY: KEY, LOOPGATE_UPSTREAM: '' };

function startSimulator() {
  return startServer('simulator', [cli, 'simulate', '--port', '0'], {
    env: plainEnv,
    ready: /Simulator listening on (http:\/\/127\.0\.0\.1:\d+)/,
  });
}

/** A plain `loopgate serve` in front of `sim` (the demo key in its environment), with `extra` arguments. */
function serveProxy(sim, name, extra, env = proxyEnv) {
  return startServer(
    name,
    [
      ...nodeFlags,
      cli,
      'serve',
      '--upstream',
      sim.url,
      '--port',
      '0',
      '--no-token',
      '--quiet',
      '--max-body',
      '64',
      ...extra,
    ],
    { env, ready: LISTENING },
  );
}

async function startTargets(label) {
  const sim = await startSimulator();
  const serve = (name, extra) => serveProxy(sim, name, extra);
  const [meta, bodies, nolog, off, fwd, ufwd, base] = await Promise.all([
    serve('loopgate', ['--log', join(tmp, `${label}-meta.jsonl`)]),
    serve('loopgate+bodies', ['--log', join(tmp, `${label}-bodies.jsonl`), '--log-bodies']),
    serve('loopgate-nolog', ['--no-log']),
    // Issue 40: what capture and the log cost together (loopgate ÷ this).
    serve('loopgate-off', ['--no-log', '--no-capture']),
    startServer('forwarder', [fileURLToPath(new URL('./forwarder.mjs', import.meta.url)), sim.url], {
      env: plainEnv,
      ready: LISTENING,
    }),
    startServer('undici-fwd', [fileURLToPath(new URL('./undici-forwarder.mjs', import.meta.url)), sim.url], {
      env: plainEnv,
      ready: LISTENING,
    }),
    baseCli
      ? startServer(
          'loopgate@base',
          [
            ...nodeFlags,
            baseCli,
            'serve',
            '--upstream',
            sim.url,
            '--port',
            '0',
            '--no-token',
            '--quiet',
            '--max-body',
            '64',
            '--log',
            join(tmp, `${label}-base.jsonl`),
          ],
          {
            env: proxyEnv,
            ready: LISTENING,
          },
        )
      : undefined,
  ]);
  const auth = { authorization: `Bearer ${KEY}` };
  const targets = {
    direct: { name: 'direct', url: sim.url, headers: auth, pid: undefined },
    loopgate: { name: 'loopgate', url: meta.url, headers: {}, pid: meta.pid },
    'loopgate+bodies': { name: 'loopgate+bodies', url: bodies.url, headers: {}, pid: bodies.pid },
    'loopgate-nolog': { name: 'loopgate-nolog', url: nolog.url, headers: {}, pid: nolog.pid },
    'loopgate-off': { name: 'loopgate-off', url: off.url, headers: {}, pid: off.pid },
    forwarder: { name: 'forwarder', url: fwd.url, headers: auth, pid: fwd.pid },
    'undici-fwd': { name: 'undici-fwd', url: ufwd.url, headers: auth, pid: ufwd.pid },
  };
  if (base) targets['loopgate@base'] = { name: 'loopgate@base', url: base.url, headers: {}, pid: base.pid };
  const stop = () => Promise.all([sim, meta, bodies, nolog, off, fwd, ufwd, base].filter(Boolean).map((s) => s.stop()));
  return { targets, stop };
}

function chatBody(stream) {
  return JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Hello' }],
    ...(stream ? { stream: true } : {}),
  });
}

function baseJob(target, extraHeaders = {}) {
  return {
    url: target.url,
    path: PATH,
    headers: { 'content-type': 'application/json', ...target.headers, ...extraHeaders },
  };
}

/** Runs `rounds` rounds, each visiting every target once, starting one further along each round. */
async function interleaved(targets, names, rounds, makeJob, timeoutMs) {
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const target = targets[names[(i + r) % names.length]];
      const job = makeJob(target);
      const m = await measured(target.pid, () => runLoad(job, timeoutMs));
      if (m.result.firstError) console.error(`bench: ${target.name}: ${m.result.firstError}`);
      runs[target.name].push(m);
    }
  }
  return runs;
}

const MAIN = [
  'direct',
  'loopgate',
  'loopgate+bodies',
  'forwarder',
  'undici-fwd',
  ...(baseCli ? ['loopgate@base'] : []),
];

// Issue 17: the same c=64 throughput with OTLP export on (a local receiver that
// accepts everything), and with the collector down or stalling, against the
// metadata-log proxy without export. Each proxy is a plain `serve` with the
// standard variables in its environment.
async function startOtlpTargets() {
  const sim = await startSimulator();
  const receiverScript = fileURLToPath(new URL('./otlp-receiver.mjs', import.meta.url));
  const [ok, stall] = await Promise.all(
    ['ok', 'stall'].map((mode) =>
      startServer(`receiver-${mode}`, [receiverScript, mode], {
        env: plainEnv,
        ready: /listening on (http:\/\/127\.0\.0\.1:\d+)/,
      }),
    ),
  );
  // Nothing listens on the discard port of loopback here: a collector that is down.
  const down = 'http://127.0.0.1:9';
  const serve = (name, endpoint) =>
    serveProxy(
      sim,
      name,
      ['--log', join(tmp, `otlp-${name}.jsonl`)],
      endpoint ? { ...proxyEnv, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } : proxyEnv,
    );
  const procs = await Promise.all([
    serve('loopgate', undefined),
    serve('loopgate+otlp', ok.url),
    serve('loopgate+otlp-down', down),
    serve('loopgate+otlp-stall', stall.url),
  ]);
  const targets = Object.fromEntries(procs.map((p) => [p.name, { name: p.name, url: p.url, headers: {}, pid: p.pid }]));
  const stop = () => Promise.all([sim, ok, stall, ...procs].map((s) => s.stop()));
  return { targets, stop };
}

const OTLP_TARGETS = ['loopgate', 'loopgate+otlp', 'loopgate+otlp-down', 'loopgate+otlp-stall'];

/** The export's own account, from each proxy's /_loopgate/health (started with --no-token). */
async function otlpHealth(targets) {
  const out = {};
  for (const name of OTLP_TARGETS.slice(1)) {
    const health = await (await fetch(`${targets[name].url}/_loopgate/health`)).json();
    out[name] = health.otlp;
  }
  return out;
}

// Issue 25: the live traffic ring costs what it costs with nobody watching; a
// Traffic view (here: a reader of /_loopgate/traffic/live, as the extension and
// `loopgate tail` are) must cost little more. And 10,000 requests leave the
// proxy's RSS within the ring's byte budget + 20 MB.
async function startTrafficTargets() {
  const sim = await startSimulator();
  const serve = (name, extra) => serveProxy(sim, name, ['--log', join(tmp, `traffic-${name}.jsonl`), ...extra]);
  const procs = await Promise.all([
    serve('loopgate', []),
    serve('loopgate+view', []),
    serve('loopgate-nocapture', ['--no-capture']),
    // Issue 34: a fault rule armed that no request is in scope of: what a non-matching rule costs.
    serve('loopgate+fault', ['--fault', '500 path=/v1/never-sent']),
  ]);
  const targets = Object.fromEntries(procs.map((p) => [p.name, { name: p.name, url: p.url, headers: {}, pid: p.pid }]));
  // The watcher: reads the live feed to its end, as the Traffic view does.
  const watching = new AbortController();
  let seen = 0;
  const res = await fetch(`${targets['loopgate+view'].url}/_loopgate/traffic/live?rows=1`, { signal: watching.signal });
  void (async () => {
    for await (const chunk of res.body)
      seen += (
        Buffer.from(chunk)
          .toString()
          .match(/^data: /gm) ?? []
      ).length;
  })().catch(() => undefined);
  const stop = () => {
    watching.abort();
    return Promise.all([sim, ...procs].map((s) => s.stop()));
  };
  return { targets, stop, seen: () => seen };
}

const TRAFFIC_TARGETS = ['loopgate', 'loopgate+view', 'loopgate-nocapture', 'loopgate+fault'];

/** c=64 closed-loop throughput of `names`, interleaved rounds: median req/s, errors, CPU per request. */
async function throughputOf(targets, names, c) {
  const runs = await interleaved(
    targets,
    names,
    c.rounds,
    (t) => ({
      ...baseJob(t),
      mode: 'throughput',
      body: chatBody(false),
      concurrency: 64,
      warmupMs: c.warmupMs,
      durationMs: c.durationMs,
    }),
    c.warmupMs + c.durationMs + 60_000,
  );
  return mapTargets(runs, (rs) => {
    const rps = rs.map((m) => m.result.rps);
    return {
      rps: median(rps),
      rpsRounds: rps.map(round1),
      requests: sum(rs, (m) => m.result.all),
      errors: sum(rs, (m) => m.result.errors),
      ...cpu(
        rs,
        sum(rs, (m) => m.result.all),
      ),
    };
  });
}

const scenarios = {
  async trafficC64(targets, seen) {
    const byTarget = await throughputOf(targets, TRAFFIC_TARGETS, cfg.otlp);
    byTarget['loopgate+view'].feedEntries = seen();
    return byTarget;
  },
  /** RSS of a plain `serve` with capture on, before and after 10,000 requests, and what its ring holds. */
  async trafficRss(target) {
    const before = rssBytes(target.pid);
    await runLoad(
      {
        ...baseJob(target),
        mode: 'throughput',
        body: chatBody(false),
        concurrency: 16,
        warmupMs: 0,
        durationMs: 600_000,
        requests: 10_000,
      },
      180_000,
    );
    const after = rssBytes(target.pid);
    const health = await (await fetch(`${target.url}/_loopgate/health`)).json();
    return {
      rssBeforeMB: round1(before / 1048576),
      rssAfterMB: round1(after / 1048576),
      growthMB: round1((after - before) / 1048576),
      ring: health.capture,
    };
  },
  async otlpC64(targets) {
    const byTarget = await throughputOf(targets, OTLP_TARGETS, cfg.otlp);
    const health = await otlpHealth(targets);
    for (const [name, h] of Object.entries(health))
      Object.assign(byTarget[name], { exported: h.exported, dropped: h.dropped, exportOk: h.ok });
    return byTarget;
  },
  async latencyC1(targets) {
    const c = cfg.latency;
    const runs = await interleaved(
      targets,
      MAIN,
      c.rounds,
      (t) => ({
        ...baseJob(t),
        mode: 'latency',
        body: chatBody(false),
        warmup: c.warmup,
        requests: c.requests,
        maxMs: 60_000,
      }),
      120_000,
    );
    return mapTargets(runs, (rs) => {
      const samples = rs.flatMap((m) => m.result.samples);
      // Loopgate's own time from its Server-Timing header, where the target sends one.
      const own = rs.flatMap((m) => m.result.serverTiming ?? []);
      return {
        p50: pct(samples, 50),
        p99: pct(samples, 99),
        n: samples.length,
        ownP50: own.length ? pct(own, 50) : undefined,
        errors: sum(rs, (m) => m.result.errors),
        ...cpu(rs, samples.length + c.warmup * rs.length),
      };
    });
  },
  async throughputC64(targets, body = chatBody(false), names = [...MAIN, 'loopgate-nolog', 'loopgate-off']) {
    const c = cfg.throughput;
    const runs = await interleaved(
      targets,
      names,
      c.rounds,
      (t) => ({
        ...baseJob(t),
        mode: 'throughput',
        body,
        concurrency: 64,
        warmupMs: c.warmupMs,
        durationMs: c.durationMs,
      }),
      c.warmupMs + c.durationMs + 60_000,
    );
    return mapTargets(runs, (rs) => {
      const rps = rs.map((m) => m.result.rps);
      return {
        rps: median(rps),
        rpsRounds: rps.map(round1),
        errors: sum(rs, (m) => m.result.errors),
        ...cpu(
          rs,
          sum(rs, (m) => m.result.all),
        ),
      };
    });
  },
  async sse(targets, level) {
    const c = cfg.sse[level];
    const headers = { 'x-sim-chunks': '50', 'x-sim-chunk-delay-ms': String(c.delayMs) };
    const runs = await interleaved(
      targets,
      MAIN,
      c.rounds,
      (t) => ({
        ...baseJob(t, headers),
        mode: 'sse',
        body: chatBody(true),
        streams: c.streams,
        connections: c.streams,
        repeat: c.repeat,
        rampMs: c.rampMs,
        maxMs: 120_000,
      }),
      180_000,
    );
    return mapTargets(runs, (rs) => {
      const ttfb = rs.flatMap((m) => m.result.ttfb);
      const gaps = rs.flatMap((m) => m.result.gaps);
      return {
        streams: c.streams,
        delayMs: c.delayMs,
        rampMs: c.rampMs,
        ttfbP50: pct(ttfb, 50),
        ttfbP99: pct(ttfb, 99),
        gapP50: pct(gaps, 50),
        gapP99: pct(gaps, 99),
        eventsMin: Math.min(...rs.map((m) => m.result.events.min)),
        eventsMax: Math.max(...rs.map((m) => m.result.events.max)),
        streamsSeen: sum(rs, (m) => m.result.events.streams),
        coalesced: sum(rs, (m) => m.result.coalesced),
        errors: sum(rs, (m) => m.result.errors),
        ...cpu(
          rs,
          sum(rs, (m) => m.result.events.streams),
        ),
      };
    });
  },
  async bigBodies(targets, mode) {
    const c = cfg.big;
    const names = MAIN;
    const runs = await interleaved(
      targets,
      names,
      c.rounds,
      (t) => ({ ...baseJob(t), mode, body: chatBody(false), bytes: 50 * 1024 * 1024 }),
      120_000,
    );
    return mapTargets(runs, (rs) => ({
      ms: median(rs.map((m) => m.result.ms ?? NaN)),
      rssGrowthMB:
        rs[0].rssPeak === undefined ? undefined : round1(Math.max(...rs.map((m) => m.rssPeak - m.rssBefore)) / 2 ** 20),
      rssPeakMB: rs[0].rssPeak === undefined ? undefined : round1(Math.max(...rs.map((m) => m.rssPeak)) / 2 ** 20),
      errors: sum(rs, (m) => m.result.errors),
    }));
  },
};

function cpu(rs, units) {
  if (rs[0].cpuMs === undefined) return {};
  const cpuTotal = sum(rs, (m) => m.cpuMs);
  const wall = sum(rs, (m) => m.wallMs);
  return {
    cpuPct: round1((100 * cpuTotal) / wall),
    cpuMsPerUnit: units ? Math.round((1000 * cpuTotal) / units) / 1000 : undefined,
    rssPeakMB: round1(Math.max(...rs.map((m) => m.rssPeak)) / 2 ** 20),
  };
}

function mapTargets(runs, f) {
  return Object.fromEntries(Object.entries(runs).map(([name, rs]) => [name, f(rs)]));
}
const sum = (xs, f) => xs.reduce((a, x) => a + f(x), 0);
const round1 = (x) => Math.round(x * 10) / 10;
function median(xs) {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
}

// Warms every target at once (JIT, pools): nothing is measured here, and in
// parallel it costs one load-generator start instead of one per target.
async function warm(targets) {
  await Promise.all(
    [...MAIN, 'loopgate-nolog', 'loopgate-off'].map((name) =>
      runLoad(
        { ...baseJob(targets[name]), mode: 'latency', body: chatBody(false), warmup: 50, requests: 1, maxMs: 10_000 },
        30_000,
      ),
    ),
  );
}

const want = (name) => !only || only.has(name);
// Progress on stderr, with the time so far (quick must stay under cfg.hardLimitS).
const say = (msg) => console.error(`bench: ${msg} (${Math.round((Date.now() - began) / 1000)} s in)`);
const results = {};
try {
  let set = await startTargets('a');
  await warm(set.targets);
  if (want('latency')) {
    say('small requests, concurrency 1');
    results.latencyC1 = await scenarios.latencyC1(set.targets);
  }
  if (want('throughput')) {
    say('small requests, concurrency 64');
    results.throughputC64 = await scenarios.throughputC64(set.targets);
    say('agent-sized requests (87 KiB, with %20 and \\u001b), concurrency 64');
    results.throughputAgentC64 = await scenarios.throughputC64(set.targets, agentBody(), [
      'loopgate',
      'loopgate-off',
      'forwarder',
      'undici-fwd',
      ...(baseCli ? ['loopgate@base'] : []),
    ]);
  }
  for (const level of ['c1', 'c100']) {
    if (!want(`sse-${level}`) && !want('sse')) continue;
    say(`SSE ${level}`);
    results[`sse_${level}`] = await scenarios.sse(set.targets, level);
  }
  await set.stop();
  // Fresh processes from here on: memory is measured from a clean, warmed-up
  // start, not on a heap the throughput runs already grew.
  if (want('sse-c1000') || want('sse')) {
    set = await startTargets('c1000');
    await warm(set.targets);
    say('SSE c1000');
    results.sse_c1000 = await scenarios.sse(set.targets, 'c1000');
    await set.stop();
  }
  if (want('big')) {
    for (const mode of ['bigRequest', 'bigResponse']) {
      set = await startTargets(mode);
      await warm(set.targets);
      say(mode);
      results[mode] = await scenarios.bigBodies(set.targets, mode);
      await set.stop();
    }
  }
  if (want('otlp')) {
    set = await startOtlpTargets();
    await Promise.all(
      OTLP_TARGETS.map((name) =>
        runLoad(
          {
            ...baseJob(set.targets[name]),
            mode: 'latency',
            body: chatBody(false),
            warmup: 50,
            requests: 1,
            maxMs: 10_000,
          },
          30_000,
        ),
      ),
    );
    say('OTLP export on / collector down / stalled, concurrency 64');
    results.otlpC64 = await scenarios.otlpC64(set.targets);
    await set.stop();
  }
  if (want('traffic')) {
    set = await startTrafficTargets();
    await Promise.all(
      TRAFFIC_TARGETS.map((name) =>
        runLoad(
          {
            ...baseJob(set.targets[name]),
            mode: 'latency',
            body: chatBody(false),
            warmup: 50,
            requests: 1,
            maxMs: 10_000,
          },
          30_000,
        ),
      ),
    );
    // RSS first, on a proxy that has served one request: what 10,000 more leave behind.
    say('Traffic ring: RSS after 10,000 requests');
    results.trafficRss = await scenarios.trafficRss(set.targets.loopgate);
    say('Traffic ring: nobody watching / a live view subscribed / capture off, concurrency 64');
    results.trafficC64 = await scenarios.trafficC64(set.targets, set.seen);
    await set.stop();
  }
  if (want('soak')) {
    const sim = await startSimulator();
    say(`soak: ${cfg.soak.requests} requests, 20 % abandoned`);
    results.soak = await runSoak({
      cli,
      simUrl: sim.url,
      key: KEY,
      env: plainEnv,
      logFile: join(tmp, 'soak.jsonl'),
      requests: cfg.soak.requests,
    });
    await sim.stop();
  }
} finally {
  killAll();
  rmSync(tmp, { recursive: true, force: true });
}

const machine = {
  nproc: cpus().length,
  cpu: cpus()[0]?.model,
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
};
const report = {
  date: new Date().toISOString(),
  quick: Boolean(values.quick),
  durationS: Math.round((Date.now() - began) / 1000),
  machine,
  config: { ...cfg, proxyNodeFlags: nodeFlags },
  results,
  checks: checks(results, { proxyNodeFlags: nodeFlags }),
};
const json = JSON.stringify(report, null, 2);
// The key must never reach a bench artefact.
if (json.includes(KEY)) throw new Error('bench: the key leaked into the report');
if (values.out) writeFileSync(values.out, json + '\n');
process.stdout.write(renderMarkdown(report) + '\n');
process.exit(0);
