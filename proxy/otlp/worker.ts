// The export worker (bundled as dist/otlp-worker.js): the official SDK runs
// here, off the proxy's thread. Measured on the proxy's thread it cost 25–40 %
// of c=64 throughput (span objects, attribute copies, protobuf encoding, the
// metrics' attribute hashing; README, Performance); here the proxy's thread
// only reads the exchange, scrubs the facts and posts them; the span is mapped
// here (rules/genai-span.ts). Messages: see worker-protocol.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { openSdkSink } from './sdk.js';
import { metricPoints, spanFromRecord } from '../rules/genai-span.js';
import type { WorkerIn, WorkerInit, WorkerOut } from './worker-protocol.js';

const port = parentPort!;
const init = workerData as WorkerInit;
const post = (m: WorkerOut) => port.postMessage(m);
const sink = openSdkSink(init.config, { version: init.version, onHealth: (health) => post({ type: 'health', health }) });

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
      const h = sink.health;
      post({ type: 'ack', n: m.records.length, exported: h.exported, dropped: h.dropped });
      return;
    }
    case 'flush':
      void sink.flush().then(() => {
        const h = sink.health;
        post({ type: 'ack', n: 0, exported: h.exported, dropped: h.dropped });
        post({ type: 'done', id: m.id });
      });
      return;
    case 'close':
      void sink.close(m.deadlineMs).then(() => {
        const h = sink.health;
        post({ type: 'ack', n: 0, exported: h.exported, dropped: h.dropped });
        post({ type: 'done', id: m.id });
      });
      return;
  }
});
