// Turns the bench results into the target checks and the markdown tables.

const f = (x, d = 2) => (x === undefined || Number.isNaN(x) ? '-' : Number(x).toFixed(d));
const ratio = (a, b) => (!Number.isFinite(a) || !Number.isFinite(b) || !b ? '-' : (a / b).toFixed(2));

/**
 * Issue 12's targets, judged on Loopgate with the metadata log on, all from one
 * run; plus two older ones still worth holding (events seen, 50 MB bodies).
 * `opts.proxyNodeFlags`: node flags the proxies ran with (BENCH_NODE_FLAGS).
 */
export function checks(r, opts = {}) {
  const out = [];
  const add = (what, measured, limit, pass) => out.push({ what, measured, limit, pass: Boolean(pass) });
  const flags = opts.proxyNodeFlags ?? [];
  if (r.throughputC64) {
    const { loopgate, forwarder } = r.throughputC64;
    const undici = r.throughputC64['undici-fwd'];
    add(
      'c=64 throughput ÷ forwarder (http-proxy)',
      `${ratio(loopgate.rps, forwarder.rps)}× (${f(loopgate.rps, 0)} vs ${f(forwarder.rps, 0)} req/s)`,
      '≥ 1.0×',
      loopgate.rps >= forwarder.rps,
    );
    if (undici) {
      const a = loopgate.cpuMsPerUnit;
      const b = undici.cpuMsPerUnit;
      add(
        'c=64 proxy CPU per request ÷ undici-fwd',
        `${ratio(a, b)}× (${f(a * 1000, 0)} vs ${f(b * 1000, 0)} µs)`,
        '≤ 1.3×',
        a !== undefined && b !== undefined && a <= 1.3 * b,
      );
    }
  }
  // Issue 40: capture and the log cost little, on the bench's tiny body and on an agent-sized one; and the
  // build under test against the one given with --compare, in the same run.
  for (const [scenario, body, limit] of [
    [r.throughputC64, 'bench body', 0.95],
    [r.throughputAgentC64, '87 KiB agent body', 0.9],
  ]) {
    const on = scenario?.loopgate;
    const off = scenario?.['loopgate-off'];
    if (on && off)
      add(
        `c=64 capture and log on ÷ off (${body})`,
        `${ratio(on.rps, off.rps)}× (${f(on.rps, 0)} vs ${f(off.rps, 0)} req/s)`,
        `≥ ${limit.toFixed(2)}×`,
        on.rps >= limit * off.rps,
      );
    const base = scenario?.['loopgate@base'];
    if (on && base)
      add(
        `c=64 throughput ÷ loopgate@base (${body})`,
        `${ratio(on.rps, base.rps)}× (${f(on.rps, 0)} vs ${f(base.rps, 0)} req/s)`,
        '≥ 1.10×',
        on.rps >= 1.1 * base.rps,
      );
  }
  if (r.latencyC1) {
    // Issue 24: what Loopgate adds over going direct, against what the http-proxy forwarder adds (the hops every proxy pays cancel out).
    const { direct, loopgate, forwarder } = r.latencyC1;
    const added = loopgate.p50 - direct.p50;
    const fwdAdded = forwarder.p50 - direct.p50;
    add(
      'c=1 added latency p50 − forwarder (http-proxy) added p50',
      `${f(added - fwdAdded, 3)} ms (${f(added, 3)} vs ${f(fwdAdded, 3)} ms)`,
      '≤ 0.1 ms',
      added - fwdAdded <= 0.1,
    );
  }
  const c1000 = r.sse_c1000;
  if (c1000) {
    const { loopgate, forwarder } = c1000;
    add(
      'SSE 1,000 streams TTFB p50 ÷ forwarder (http-proxy)',
      `${ratio(loopgate.ttfbP50, forwarder.ttfbP50)}× (${f(loopgate.ttfbP50, 1)} vs ${f(forwarder.ttfbP50, 1)} ms)`,
      '≤ 1.3×',
      loopgate.ttfbP50 <= 1.3 * forwarder.ttfbP50,
    );
    // The target is for a plain `loopgate serve`: a run with BENCH_NODE_FLAGS does not count.
    add(
      'SSE 1,000 streams proxy RSS (plain `loopgate serve`)',
      `${f(loopgate.rssPeakMB, 1)} MB${flags.length ? ` (with node flags ${flags.join(' ')}: not a plain serve)` : ''}`,
      '≤ 150 MB',
      loopgate.rssPeakMB <= 150 && !flags.length,
    );
  }
  for (const level of ['c1', 'c100', 'c1000']) {
    const s = r[`sse_${level}`];
    if (!s) continue;
    const { direct, loopgate, forwarder } = s;
    const sameCount =
      loopgate.eventsMin === direct.eventsMax && loopgate.eventsMax === direct.eventsMax && loopgate.errors === 0;
    add(
      `SSE ${level} events seen = sent`,
      `${loopgate.eventsMin}..${loopgate.eventsMax} of ${direct.eventsMax}`,
      'equal',
      sameCount,
    );
    // "coalesced" (load.mjs) counts, per read the client makes, the events that
    // arrived in that read beyond the first. The simulator writes every event
    // on its own, a delay apart, so a proxy that passes writes through adds
    // none, while one that buffers (corks, batches, waits for more) merges most
    // of them. But reads also merge events whenever any process on the path
    // runs late and two writes sit in one socket buffer, which depends on the
    // machine's load, not on the proxy. At 100 and 1,000 streams the cores are
    // saturated and that noise dominates: in one quick run the two plain
    // forwarders, neither of which buffers, read 918 vs 1,384 (c=100) and
    // 4,117 vs 463 (c=1,000), and direct 511 and 32. A check there would flip
    // with the load, so there is none (the figures stay in the tables). At one
    // stream the machine is idle between events 10 ms apart, every pass-through
    // target reads 0, and a buffering proxy would show tens per stream: the
    // check is made there, against the http-proxy forwarder, with room for an
    // odd late turn (1 % of the events seen, at least 2).
    if (level === 'c1') {
      const events = loopgate.streamsSeen * loopgate.eventsMax;
      const slack = Math.max(2, Math.ceil(events * 0.01));
      add(
        'SSE c1 coalesced events (no chunk coalescing), loopgate − forwarder',
        `${loopgate.coalesced - forwarder.coalesced} (${loopgate.coalesced} vs ${forwarder.coalesced}, of ${events} events)`,
        `≤ ${slack}`,
        loopgate.coalesced - forwarder.coalesced <= slack,
      );
    }
  }
  const soak = r.soak;
  if (soak) {
    add(
      `soak: errors for clients that stayed (${soak.requests} requests, ${soak.aborted} abandoned)`,
      String(soak.clientErrors),
      '0',
      soak.clientErrors === 0,
    );
    add('soak: log records = requests', `${soak.records} of ${soak.requests}`, 'equal', soak.records === soak.requests);
    add('soak: requests in flight once idle', String(soak.inFlightIdle), '0', soak.inFlightIdle === 0);
    // The proxy's listening socket and its log stay open; a leak grows with the request count.
    add(
      'soak: descriptors and sockets once idle vs before',
      `${soak.idle.fds} / ${soak.idle.sockets} vs ${soak.before.fds} / ${soak.before.sockets}`,
      '≤ before + 2',
      soak.idle.fds <= soak.before.fds + 2 && soak.idle.sockets <= soak.before.sockets + 2,
    );
  }
  const o = r.otlpC64;
  if (o) {
    const base = o.loopgate;
    const on = o['loopgate+otlp'];
    add(
      'c=64 throughput with OTLP export on ÷ off (issue 17)',
      `${ratio(on.rps, base.rps)}× (${f(on.rps, 0)} vs ${f(base.rps, 0)} req/s)`,
      '≥ 0.95×',
      on.rps >= 0.95 * base.rps && on.errors === 0,
    );
    add(
      'OTLP export on: spans dropped with a receiver that accepts',
      `${on.dropped} (${on.exported} exported)`,
      '0',
      on.dropped === 0,
    );
    for (const name of ['loopgate+otlp-down', 'loopgate+otlp-stall']) {
      const x = o[name];
      add(
        `c=64 throughput, collector ${name.split('-').pop()} ÷ export off`,
        `${ratio(x.rps, base.rps)}× (${f(x.rps, 0)} req/s, ${x.errors} errors; ${x.dropped} spans dropped, counted)`,
        '≥ 0.95×, 0 errors',
        x.rps >= 0.95 * base.rps && x.errors === 0,
      );
    }
  }
  const tr = r.trafficC64;
  if (tr) {
    const base = tr.loopgate;
    const view = tr['loopgate+view'];
    add(
      'c=64 throughput with a Traffic view subscribed ÷ none (issue 25)',
      `${ratio(view.rps, base.rps)}× (${f(view.rps, 0)} vs ${f(base.rps, 0)} req/s; the view received ${view.feedEntries} entries)`,
      '≥ 0.95×',
      view.rps >= 0.95 * base.rps && view.errors === 0,
    );
    const fault = tr['loopgate+fault'];
    if (fault)
      add(
        'c=64 throughput with a fault rule armed out of scope ÷ none (issue 34)',
        `${ratio(fault.rps, base.rps)}× (${f(fault.rps, 0)} vs ${f(base.rps, 0)} req/s)`,
        '≥ 0.95×',
        fault.rps >= 0.95 * base.rps && fault.errors === 0,
      );
  }
  const rss = r.trafficRss;
  if (rss) {
    const budgetMB = rss.ring.limits.bytes / 1048576;
    add(
      'RSS growth after 10,000 requests, capture on (issue 25)',
      `${f(rss.growthMB, 1)} MB (${f(rss.rssBeforeMB, 1)} → ${f(rss.rssAfterMB, 1)}; the ring holds ${rss.ring.entries} requests, ${f(rss.ring.bytes / 1048576, 1)} MB)`,
      `≤ ring budget ${budgetMB} + 20 MB`,
      rss.growthMB <= budgetMB + 20,
    );
  }
  for (const mode of ['bigRequest', 'bigResponse']) {
    const b = r[mode];
    if (!b) continue;
    add(
      `50 MB ${mode === 'bigRequest' ? 'request' : 'response'} RSS growth`,
      `${f(b.loopgate.rssGrowthMB, 1)} MB`,
      '≤ 32 MB',
      b.loopgate.rssGrowthMB <= 32 && b.loopgate.errors === 0,
    );
  }
  return out;
}

const OTLP_ORDER = ['loopgate', 'loopgate+otlp', 'loopgate+otlp-down', 'loopgate+otlp-stall'];

function table(head, rows) {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** One row per headline figure: the targets side by side, with loopgate's ratios. */
export function renderSummary(r) {
  const rows = [];
  const withBase = Boolean(
    r.latencyC1?.['loopgate@base'] || r.sse_c1000?.['loopgate@base'] || r.throughputC64?.['loopgate@base'],
  );
  const row = (label, get, digits = 2) => {
    const v = (n) => get(n);
    const lg = v('loopgate');
    const cells = [
      label,
      f(v('direct'), digits),
      f(lg, digits),
      f(v('loopgate+bodies'), digits),
      f(v('forwarder'), digits),
      f(v('undici-fwd'), digits),
      ratio(lg, v('direct')),
      ratio(lg, v('forwarder')),
      ratio(lg, v('undici-fwd')),
    ];
    if (withBase) cells.push(f(v('loopgate@base'), digits));
    rows.push(cells);
  };
  const at = (scenario, field) => (n) => scenario?.[n]?.[field];
  if (r.latencyC1) {
    row('c=1 latency p50 (ms)', at(r.latencyC1, 'p50'), 3);
    row('c=1 latency p99 (ms)', at(r.latencyC1, 'p99'), 3);
  }
  if (r.throughputC64) {
    row('c=64 throughput (req/s)', at(r.throughputC64, 'rps'), 0);
    row('c=64 process CPU (µs/req)', (n) => (r.throughputC64[n]?.cpuMsPerUnit ?? NaN) * 1000, 0);
  }
  if (r.throughputAgentC64) {
    row('c=64 throughput, 87 KiB agent body (req/s)', at(r.throughputAgentC64, 'rps'), 0);
    row(
      'c=64 process CPU, 87 KiB agent body (µs/req)',
      (n) => (r.throughputAgentC64[n]?.cpuMsPerUnit ?? NaN) * 1000,
      0,
    );
  }
  for (const level of ['c1', 'c100', 'c1000']) {
    const s = r[`sse_${level}`];
    if (!s) continue;
    row(`SSE ${level} TTFB p50 (ms)`, at(s, 'ttfbP50'), 2);
    row(`SSE ${level} gap p99 (ms)`, at(s, 'gapP99'), 2);
    if (level === 'c1000') row('SSE c1000 process RSS (MB)', at(s, 'rssPeakMB'), 1);
  }
  if (r.bigRequest) row('50 MB request: RSS growth (MB)', at(r.bigRequest, 'rssGrowthMB'), 1);
  if (r.bigResponse) row('50 MB response: RSS growth (MB)', at(r.bigResponse, 'rssGrowthMB'), 1);
  const head = [
    'figure',
    'direct',
    'loopgate',
    'loopgate+bodies',
    'forwarder',
    'undici-fwd',
    'loopgate ÷ direct',
    'loopgate ÷ fwd',
    'loopgate ÷ undici',
  ];
  return table(withBase ? [...head, 'loopgate@base'] : head, rows);
}

export function renderMarkdown(report) {
  const r = report.results;
  const m = report.machine;
  const parts = [
    `## Loopgate benchmark (${report.quick ? 'quick' : 'full'}, ${report.durationS} s)`,
    '',
    `${m.nproc} × ${m.cpu}, Node ${m.node}, ${m.platform}. Simulator, proxy under test and load generator each in their own process, on loopback.`,
    'Targets: direct = simulator; loopgate = metadata log on; loopgate+bodies = --log-bodies; loopgate-nolog = --no-log; loopgate-off = --no-log --no-capture; forwarder = http-proxy with a keep-alive agent; undici-fwd = http.createServer + an undici Pool, piped. Ratios are target ÷ direct, ÷ forwarder (fwd) and ÷ undici-fwd (undici).',
    `Proxies run as a plain \`node dist/cli.js serve\`${report.config?.proxyNodeFlags?.length ? ` with node flags ${report.config.proxyNodeFlags.join(' ')}` : ' (no node flags)'}.`,
  ];
  parts.push('', '### Summary', '', renderSummary(r));
  if (r.latencyC1) {
    const d = r.latencyC1.direct;
    const fw = r.latencyC1.forwarder;
    const un = r.latencyC1['undici-fwd'];
    parts.push('', '### Small chat requests, concurrency 1 (latency, ms)', '');
    parts.push(
      table(
        [
          'target',
          'p50',
          'p99',
          'added p50',
          'added p99',
          'p50 ÷ direct',
          'p50 ÷ fwd',
          'p50 ÷ undici',
          'CPU ms/req',
          "Loopgate's own time p50 (Server-Timing)",
        ],
        Object.entries(r.latencyC1).map(([n, x]) => [
          n,
          f(x.p50, 3),
          f(x.p99, 3),
          f(x.p50 - d.p50, 3),
          f(x.p99 - d.p99, 3),
          ratio(x.p50, d.p50),
          ratio(x.p50, fw.p50),
          ratio(x.p50, un?.p50),
          f(x.cpuMsPerUnit, 3),
          f(x.ownP50, 3),
        ]),
      ),
    );
  }
  for (const [scenario, title] of [
    [r.throughputC64, 'Small chat requests, concurrency 64 (throughput)'],
    [
      r.throughputAgentC64,
      '87 KiB agent-sized chat requests (`%20` and `\\u001b` escapes), concurrency 64 (throughput)',
    ],
  ]) {
    if (!scenario) continue;
    const d = scenario.direct;
    const fw = scenario.forwarder;
    const un = scenario['undici-fwd'];
    const off = scenario['loopgate-off'];
    parts.push('', `### ${title}`, '');
    parts.push(
      table(
        [
          'target',
          'req/s',
          '÷ direct',
          '÷ fwd',
          '÷ undici',
          '÷ capture+log off',
          'rounds',
          'errors',
          'CPU %',
          'CPU µs/req',
          'CPU ÷ fwd',
          'CPU ÷ undici',
          'RSS MB',
        ],
        Object.entries(scenario).map(([n, x]) => [
          n,
          f(x.rps, 0),
          ratio(x.rps, d?.rps),
          ratio(x.rps, fw.rps),
          ratio(x.rps, un?.rps),
          ratio(x.rps, off?.rps),
          x.rpsRounds.map((v) => f(v, 0)).join(' / '),
          x.errors,
          f(x.cpuPct, 0),
          f(x.cpuMsPerUnit * 1000, 0),
          ratio(x.cpuMsPerUnit, fw.cpuMsPerUnit),
          ratio(x.cpuMsPerUnit, un?.cpuMsPerUnit),
          f(x.rssPeakMB, 1),
        ]),
      ),
    );
  }
  for (const level of ['c1', 'c100', 'c1000']) {
    const s = r[`sse_${level}`];
    if (!s) continue;
    const d = s.direct;
    const fw = s.forwarder;
    parts.push(
      '',
      `### SSE, 50 chunks ${d.delayMs} ms apart, ${d.streams} concurrent stream(s)${d.rampMs ? `, started over ${d.rampMs} ms` : ''} (ms)`,
      '',
    );
    parts.push(
      table(
        [
          'target',
          'TTFB p50',
          'TTFB p99',
          'added TTFB p50',
          'TTFB ÷ direct',
          'TTFB ÷ fwd',
          'gap p50',
          'gap p99',
          'gap p99 − direct',
          'events/stream',
          'coalesced',
          'errors',
          'CPU %',
          'RSS MB',
        ],
        Object.entries(s).map(([n, x]) => [
          n,
          f(x.ttfbP50, 3),
          f(x.ttfbP99, 3),
          f(x.ttfbP50 - d.ttfbP50, 3),
          ratio(x.ttfbP50, d.ttfbP50),
          ratio(x.ttfbP50, fw.ttfbP50),
          f(x.gapP50),
          f(x.gapP99),
          f(x.gapP99 - d.gapP99),
          x.eventsMin === x.eventsMax ? String(x.eventsMin) : `${x.eventsMin}..${x.eventsMax}`,
          x.coalesced,
          x.errors,
          f(x.cpuPct, 0),
          f(x.rssPeakMB, 1),
        ]),
      ),
    );
  }
  for (const mode of ['bigRequest', 'bigResponse']) {
    const b = r[mode];
    if (!b) continue;
    parts.push('', `### One 50 MB ${mode === 'bigRequest' ? 'request' : 'response'} body`, '');
    parts.push(
      table(
        ['target', 'time ms', 'time ÷ direct', 'time ÷ fwd', 'RSS growth MB', 'growth ÷ fwd', 'RSS peak MB', 'errors'],
        Object.entries(b).map(([n, x]) => [
          n,
          f(x.ms, 0),
          ratio(x.ms, b.direct.ms),
          ratio(x.ms, b.forwarder.ms),
          f(x.rssGrowthMB, 1),
          ratio(x.rssGrowthMB, b.forwarder.rssGrowthMB),
          f(x.rssPeakMB, 1),
          x.errors,
        ]),
      ),
    );
  }
  const o = r.otlpC64;
  if (o) {
    parts.push(
      '',
      '### OTLP export (issue 17): c=64 throughput with a local receiver, a collector that is down, one that stalls',
      '',
    );
    parts.push(
      table(
        ['target', 'req/s', '÷ export off', 'CPU µs/req', 'errors', 'spans exported', 'spans dropped'],
        OTLP_ORDER.filter((n) => o[n]).map((n) => [
          n,
          f(o[n].rps, 0),
          ratio(o[n].rps, o.loopgate.rps),
          f((o[n].cpuMsPerUnit ?? NaN) * 1000, 0),
          o[n].errors,
          o[n].exported ?? '-',
          o[n].dropped ?? '-',
        ]),
      ),
    );
  }
  const tr = r.trafficC64;
  if (tr) {
    parts.push(
      '',
      '### Traffic ring (issue 25): c=64 throughput with nobody watching, a Traffic view subscribed, capture off, a fault rule armed out of scope (issue 34)',
      '',
    );
    parts.push(
      table(
        ['target', 'req/s', '÷ nobody watching', 'CPU µs/req', 'errors'],
        ['loopgate', 'loopgate+view', 'loopgate-nocapture', 'loopgate+fault']
          .filter((n) => tr[n])
          .map((n) => [
            n,
            f(tr[n].rps, 0),
            ratio(tr[n].rps, tr.loopgate.rps),
            f((tr[n].cpuMsPerUnit ?? NaN) * 1000, 0),
            tr[n].errors,
          ]),
      ),
    );
  }
  const soak = r.soak;
  if (soak) {
    parts.push(
      '',
      `### Soak: ${soak.requests} chat requests, half streamed, ${Math.round(soak.abortShare * 100)} % abandoned by the client (before the answer or mid-stream), concurrency ${soak.concurrency}`,
      '',
      `${soak.seconds} s (${soak.rps} req/s): ${soak.completed} completed, ${soak.aborted} abandoned, ${soak.clientErrors} errors for clients that stayed${soak.firstError ? ` (first: ${soak.firstError})` : ''}; ${soak.records} log records for ${soak.requests} requests; ${soak.inFlightIdle} in flight once idle (after ${soak.idle.afterS} s).`,
      '',
    );
    parts.push(
      table(
        ['proxy', 'RSS MB', 'descriptors', 'sockets'],
        [
          ['before (warmed up)', f(soak.before.rssMB, 1), soak.before.fds, soak.before.sockets],
          ['right after', f(soak.after.rssMB, 1), soak.after.fds, soak.after.sockets],
          ['idle', f(soak.idle.rssMB, 1), soak.idle.fds, soak.idle.sockets],
        ],
      ),
    );
  }
  parts.push('', '### Targets (loopgate with the metadata log)', '');
  parts.push(
    table(
      ['target', 'measured', 'limit', 'result'],
      report.checks.map((c) => [c.what, c.measured, c.limit, c.pass ? 'met' : '**MISSED**']),
    ),
  );
  return parts.join('\n');
}
