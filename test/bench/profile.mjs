// Profiles the proxy under one load: `node test/bench/profile.mjs [throughput|sse|latency] [--bodies] [--agent]`
// (--agent: the bench's 87 KiB agent-sized body instead of the tiny one; --base <cli.js>: profile another build).
// Runs `node --cpu-prof` on the proxy child, then prints the top self-time frames.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentBody } from './agent-body.mjs';
import { killAll, runLoad, startServer } from './procs.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const baseAt = process.argv.indexOf('--base');
const cli = baseAt > 0 ? process.argv[baseAt + 1] : join(root, 'dist/cli.js');
const fixture = JSON.parse(readFileSync(join(root, 'simulator/default-fixture.json'), 'utf8'));
const KEY = fixture.keys.find((k) => k.group === 'default' && k.status === 'active' && !k.rpm && !k.models).key;
const mode = process.argv[2] ?? 'throughput';
const dir = mkdtempSync(join(tmpdir(), 'loopgate-prof-'));
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

const sim = await startServer('simulator', [cli, 'simulate', '--port', '0'], {
  ready: /Simulator listening on (http:\/\/127\.0\.0\.1:\d+)/,
});
const extra = process.argv.includes('--bodies') ? ['--log-bodies'] : [];
const proxy = await startServer(
  'loopgate',
  [
    '--cpu-prof',
    '--cpu-prof-dir',
    dir,
    cli,
    'serve',
    '--upstream',
    sim.url,
    '--port',
    '0',
    '--no-token',
    '--quiet',
    '--log',
    join(dir, 'traffic.jsonl'),
    ...extra,
  ],
  {
    env: { ...process.env, LOOPGATE_API_KEY: KEY },
    ready: LISTENING,
  },
);
const plainBody = (stream) =>
  JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Hello' }],
    ...(stream ? { stream: true } : {}),
  });
const body = (stream) => (process.argv.includes('--agent') && !stream ? agentBody() : plainBody(stream));
const base = { url: proxy.url, path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } };
const jobs = {
  throughput: { ...base, mode: 'throughput', body: body(false), concurrency: 64, warmupMs: 500, durationMs: 5000 },
  latency: { ...base, mode: 'latency', body: body(false), warmup: 200, requests: 3000, maxMs: 30_000 },
  sse: {
    ...base,
    headers: { ...base.headers, 'x-sim-chunks': '50', 'x-sim-chunk-delay-ms': '10' },
    mode: 'sse',
    body: body(true),
    streams: 100,
    connections: 100,
    repeat: 5,
    maxMs: 60_000,
  },
};
const result = await runLoad(jobs[mode], 120_000);
console.log(JSON.stringify({ ...result, ttfb: undefined, gaps: undefined, samples: undefined }));
await proxy.stop();
await sim.stop();
killAll();

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const prof = JSON.parse(readFileSync(join(dir, file), 'utf8'));
const self = new Map();
const dt = new Map();
for (let i = 0; i < prof.samples.length; i++)
  dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
let total = 0;
for (const n of prof.nodes) {
  const us = dt.get(n.id) ?? 0;
  total += us;
  const cf = n.callFrame;
  const key = `${cf.functionName || '(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + us);
}
console.log(`profile: ${join(dir, file)}  total ${(total / 1000).toFixed(0)} ms`);
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40))
  console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
