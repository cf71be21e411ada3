// A local OTLP/HTTP receiver for the bench: reads each export whole and answers
// 200 with an empty response (`ok`), 500 (`500`), or never (`stall`). It does
// not decode: the bench measures the proxy, not the receiver.
// Usage: node otlp-receiver.mjs [ok|500|stall]
import { createServer } from 'node:http';

const mode = process.argv[2] ?? 'ok';
let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (d) => (bytes += d.length));
  req.on('end', () => {
    requests++;
    if (mode === 'stall') return;
    if (mode === '500') return void res.writeHead(500).end();
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
server.listen(0, '127.0.0.1', () =>
  console.log(`OTLP receiver (${mode}) listening on http://127.0.0.1:${server.address().port}`),
);
process.on('SIGTERM', () => {
  console.error(`receiver: ${requests} exports, ${bytes} bytes`);
  process.exit(0);
});
