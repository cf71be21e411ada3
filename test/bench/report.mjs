// Turns the bench results into the target checks and the markdown tables.

const f = (x, d = 2) => (x === undefined || Number.isNaN(x) ? '-' : Number(x).toFixed(d));
const ratio = (a, b) => (a === undefined || b === undefined || !b ? '-' : (a / b).toFixed(2));

/** The issue's targets, judged on Loopgate with the metadata log on. */
export function checks(r) {
  const out = [];
  const add = (what, measured, limit, pass) => out.push({ what, measured, limit, pass });
  if (r.latencyC1) {
    const { direct, loopgate } = r.latencyC1;
    add('c=1 added latency p50', `${f(loopgate.p50 - direct.p50, 3)} ms`, '≤ 0.3 ms', loopgate.p50 - direct.p50 <= 0.3);
    add('c=1 added latency p99', `${f(loopgate.p99 - direct.p99, 3)} ms`, '≤ 1.5 ms', loopgate.p99 - direct.p99 <= 1.5);
  }
  if (r.throughputC64) {
    const { direct, loopgate, forwarder } = r.throughputC64;
    const nolog = r.throughputC64['loopgate-nolog'];
    add('c=64 throughput ÷ forwarder', `${ratio(loopgate.rps, forwarder.rps)}×`, '≥ 1.5×', loopgate.rps >= 1.5 * forwarder.rps);
    add('c=64 throughput ÷ direct', `${ratio(loopgate.rps, direct.rps)}×`, '≥ 0.4×', loopgate.rps >= 0.4 * direct.rps);
    const cost = 1 - loopgate.rps / nolog.rps;
    add('metadata log cost (vs --no-log)', `${f(100 * cost, 1)} %`, '≤ 10 %', cost <= 0.1);
  }
  for (const level of ['c1', 'c100', 'c1000']) {
    const s = r[`sse_${level}`];
    if (!s) continue;
    const { direct, loopgate } = s;
    add(`SSE ${level} added TTFB p50`, `${f(loopgate.ttfbP50 - direct.ttfbP50, 3)} ms`, '≤ 1 ms', loopgate.ttfbP50 - direct.ttfbP50 <= 1);
    const sameCount = loopgate.eventsMin === direct.eventsMax && loopgate.eventsMax === direct.eventsMax && loopgate.errors === 0;
    add(`SSE ${level} events seen = sent`, `${loopgate.eventsMin}..${loopgate.eventsMax} of ${direct.eventsMax}`, 'equal', sameCount);
    add(`SSE ${level} gap p99 − direct`, `${f(loopgate.gapP99 - direct.gapP99, 3)} ms`, '≤ 2 ms', loopgate.gapP99 - direct.gapP99 <= 2);
    if (level === 'c1000') add('1000 streams proxy RSS', `${f(loopgate.rssPeakMB, 1)} MB`, '≤ 150 MB', loopgate.rssPeakMB <= 150);
  }
  for (const mode of ['bigRequest', 'bigResponse']) {
    const b = r[mode];
    if (!b) continue;
    add(`50 MB ${mode === 'bigRequest' ? 'request' : 'response'} RSS growth`, `${f(b.loopgate.rssGrowthMB, 1)} MB`, '≤ 32 MB', b.loopgate.rssGrowthMB <= 32 && b.loopgate.errors === 0);
  }
  return out;
}

function table(head, rows) {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** One row per headline figure: the four targets side by side, with loopgate's ratios. */
export function renderSummary(r) {
  const rows = [];
  const row = (label, get, digits = 2) => {
    const v = (n) => get(n);
    const lg = v('loopgate');
    const cells = [label, f(v('direct'), digits), f(lg, digits), f(v('loopgate+bodies'), digits), f(v('forwarder'), digits), ratio(lg, v('direct')), ratio(lg, v('forwarder'))];
    if (r.latencyC1?.['loopgate@base'] || r.sse_c1000?.['loopgate@base']) cells.push(f(v('loopgate@base'), digits));
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
  for (const level of ['c1', 'c100', 'c1000']) {
    const s = r[`sse_${level}`];
    if (!s) continue;
    row(`SSE ${level} TTFB p50 (ms)`, at(s, 'ttfbP50'), 2);
    row(`SSE ${level} gap p99 (ms)`, at(s, 'gapP99'), 2);
    if (level === 'c1000') row('SSE c1000 process RSS (MB)', at(s, 'rssPeakMB'), 1);
  }
  if (r.bigRequest) row('50 MB request: RSS growth (MB)', at(r.bigRequest, 'rssGrowthMB'), 1);
  if (r.bigResponse) row('50 MB response: RSS growth (MB)', at(r.bigResponse, 'rssGrowthMB'), 1);
  const head = ['figure', 'direct', 'loopgate', 'loopgate+bodies', 'forwarder', 'loopgate ÷ direct', 'loopgate ÷ fwd'];
  return table(r.latencyC1?.['loopgate@base'] || r.sse_c1000?.['loopgate@base'] ? [...head, 'loopgate@base'] : head, rows);
}

export function renderMarkdown(report) {
  const r = report.results;
  const m = report.machine;
  const parts = [
    `## Loopgate benchmark (${report.quick ? 'quick' : 'full'}, ${report.durationS} s)`,
    '',
    `${m.nproc} × ${m.cpu}, Node ${m.node}, ${m.platform}. Simulator, proxy under test and load generator each in their own process, on loopback.`,
    'Targets: direct = simulator; loopgate = metadata log on; loopgate+bodies = --log-bodies; forwarder = http-proxy with a keep-alive agent. Ratios are target ÷ direct and target ÷ forwarder.',
  ];
  parts.push('', '### Summary', '', renderSummary(r));
  if (r.latencyC1) {
    const d = r.latencyC1.direct;
    const fw = r.latencyC1.forwarder;
    parts.push('', '### Small chat requests, concurrency 1 (latency, ms)', '');
    parts.push(
      table(
        ['target', 'p50', 'p99', 'added p50', 'added p99', 'p50 ÷ direct', 'p50 ÷ fwd', 'CPU ms/req'],
        Object.entries(r.latencyC1).map(([n, x]) => [n, f(x.p50, 3), f(x.p99, 3), f(x.p50 - d.p50, 3), f(x.p99 - d.p99, 3), ratio(x.p50, d.p50), ratio(x.p50, fw.p50), f(x.cpuMsPerUnit, 3)]),
      ),
    );
  }
  if (r.throughputC64) {
    const d = r.throughputC64.direct;
    const fw = r.throughputC64.forwarder;
    parts.push('', '### Small chat requests, concurrency 64 (throughput)', '');
    parts.push(
      table(
        ['target', 'req/s', '÷ direct', '÷ fwd', 'rounds', 'errors', 'CPU %', 'CPU µs/req', 'RSS MB'],
        Object.entries(r.throughputC64).map(([n, x]) => [n, f(x.rps, 0), ratio(x.rps, d.rps), ratio(x.rps, fw.rps), x.rpsRounds.map((v) => f(v, 0)).join(' / '), x.errors, f(x.cpuPct, 0), f(x.cpuMsPerUnit * 1000, 0), f(x.rssPeakMB, 1)]),
      ),
    );
  }
  for (const level of ['c1', 'c100', 'c1000']) {
    const s = r[`sse_${level}`];
    if (!s) continue;
    const d = s.direct;
    const fw = s.forwarder;
    parts.push('', `### SSE, 50 chunks ${d.delayMs} ms apart, ${d.streams} concurrent stream(s)${d.rampMs ? `, started over ${d.rampMs} ms` : ''} (ms)`, '');
    parts.push(
      table(
        ['target', 'TTFB p50', 'TTFB p99', 'added TTFB p50', 'TTFB ÷ direct', 'TTFB ÷ fwd', 'gap p50', 'gap p99', 'gap p99 − direct', 'events/stream', 'coalesced', 'errors', 'CPU %', 'RSS MB'],
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
        Object.entries(b).map(([n, x]) => [n, f(x.ms, 0), ratio(x.ms, b.direct.ms), ratio(x.ms, b.forwarder.ms), f(x.rssGrowthMB, 1), ratio(x.rssGrowthMB, b.forwarder.rssGrowthMB), f(x.rssPeakMB, 1), x.errors]),
      ),
    );
  }
  parts.push('', '### Targets (loopgate with the metadata log)', '');
  parts.push(table(['target', 'measured', 'limit', 'result'], report.checks.map((c) => [c.what, c.measured, c.limit, c.pass ? 'met' : '**MISSED**'])));
  return parts.join('\n');
}
