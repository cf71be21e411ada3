// The export worker (bundled as dist/otlp-worker.js): the official SDK runs
// here, off the proxy's thread. Measured on the proxy's thread it cost 25–40 %
// of c=64 throughput (span objects, attribute copies, protobuf encoding, the
// metrics' attribute hashing; README, Performance); the proxy's thread now
// only reads the exchange, scrubs the facts and posts them; the span is mapped
// here (rules/otlp/genai-span.ts). Messages: see worker-protocol.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { openSdkSink } from './sdk.js';
import { spanFromRecord } from '../../rules/otlp/genai-span.js';
import { metricPoints } from '../../rules/otlp/genai-metric-points.js';
import type { WorkerIn, WorkerInit, WorkerOut } from './worker-protocol.js';

const port = parentPort!;
const init = workerData as WorkerInit;
const post = (m: WorkerOut) => port.postMessage(m);

/** Records taken and not yet reported; the SDK's counts go with them, at most every 50 ms (each message costs the proxy's thread). */
let taken = 0;
let pending: NodeJS.Timeout | undefined;
function state(): void {
  if (pending) clearTimeout(pending);
  pending = undefined;
  const h = sink.health;
  post({
    type: 'state',
    n: taken,
    exported: h.exported,
    dropped: h.dropped,
    ok: h.ok,
    ...(h.error ? { error: h.error } : {}),
  });
  taken = 0;
}
const soon = () => void (pending ??= setTimeout(state, 50));
const sink = openSdkSink(init.config, { version: init.version, onChange: soon });
const server = init.server;

port.on('message', (m: WorkerIn) => {
  switch (m.type) {
    case 'records': {
      for (let i = 0; i < m.records.length; i++) {
        const rec = m.records[i]!;
        try {
          const facts = m.facts[i]!;
          if (server) {
            facts.serverAddress = server.address;
            facts.serverPort = server.port;
          }
          const span = spanFromRecord(rec, facts);
          sink.record(span, metricPoints(span, rec));
        } catch {
          // A record the mapping cannot read is a lost span (counted), never a stopped export.
          sink.lost(1);
        }
      }
      taken += m.records.length;
      soon();
      return;
    }
    case 'flush':
      void sink.flush().then(() => {
        state();
        post({ type: 'done', id: m.id });
      });
      return;
    case 'close':
      void sink.close(m.deadlineMs).then(() => {
        state();
        post({ type: 'done', id: m.id });
      });
      return;
  }
});
