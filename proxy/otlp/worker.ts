// The export worker (bundled as dist/otlp-worker.js): the official SDK runs
// here, off the proxy's thread. Measured on the proxy's thread it cost 25–40 %
// of c=64 throughput (span objects, attribute copies, protobuf encoding, the
// metrics' attribute hashing; README, Performance); the proxy's thread now
// only reads the exchange, scrubs the facts and posts them; the span is mapped
// here (rules/genai-span.ts). Messages: see worker-protocol.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { openSdkSink } from './sdk.js';
import { metricPoints, spanFromRecord } from '../rules/genai-span.js';
import type { WorkerIn, WorkerInit, WorkerOut } from './worker-protocol.js';

const port = parentPort!;
const init = workerData as WorkerInit;
const post = (m: WorkerOut) => port.postMessage(m);

/** The SDK's counts, sent with `n` records taken, or (n 0) soon after an export's outcome. */
let pending: NodeJS.Timeout | undefined;
function state(n: number): void {
  if (pending) clearTimeout(pending);
  pending = undefined;
  const h = sink.health;
  post({ type: 'state', n, exported: h.exported, dropped: h.dropped, ok: h.ok, ...(h.error ? { error: h.error } : {}) });
}
const sink = openSdkSink(init.config, {
  version: init.version,
  // Every outcome counts, but one message per 50 ms is enough for the proxy's health.
  onChange: () => void (pending ??= setTimeout(() => state(0), 50)),
});

port.on('message', (m: WorkerIn) => {
  switch (m.type) {
    case 'records': {
      for (let i = 0; i < m.records.length; i++) {
        const rec = m.records[i]!;
        try {
          const span = spanFromRecord(rec, m.facts[i]);
          sink.record(span, metricPoints(span, rec));
        } catch {
          // A record the mapping cannot read is a lost span (counted), never a stopped export.
          sink.lost(1);
        }
      }
      state(m.records.length);
      return;
    }
    case 'flush':
      void sink.flush().then(() => {
        state(0);
        post({ type: 'done', id: m.id });
      });
      return;
    case 'close':
      void sink.close(m.deadlineMs).then(() => {
        state(0);
        post({ type: 'done', id: m.id });
      });
      return;
  }
});
