// The other baseline: the bare forwarder a person would write with undici —
// http.createServer + an undici Pool to the upstream origin, hop-by-hop headers
// dropped, bodies piped both ways. No logging, no guards, no retries.
// Usage: node undici-forwarder.mjs UPSTREAM_ORIGIN
import http from 'node:http';
import { Pool } from 'undici';

// RFC 9110 §7.6.1 hop-by-hop headers, plus host (the pool sets the upstream's)
// and expect (undici refuses it).
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'expect',
]);
const endToEnd = (headers) => {
  const out = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP.has(k)) out[k] = v;
  return out;
};

const pool = new Pool(process.argv[2]);
const server = http.createServer(async (req, res) => {
  try {
    const up = await pool.request({
      path: req.url,
      method: req.method,
      headers: endToEnd(req.headers),
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : req,
    });
    res.writeHead(up.statusCode, endToEnd(up.headers));
    // body.pipe, not stream.pipeline: on Node 20 pipeline() costs an
    // AbortController and a DOMException per call, which measured ~100 µs of CPU
    // per request here (~1.8× http-proxy's total) and would make this baseline
    // far heavier than the ten lines a person would write warrant.
    up.body.on('error', () => res.destroy());
    // The client left before the end: let go of the upstream connection.
    res.once('close', () => res.writableFinished || up.body.destroy());
    up.body.pipe(res);
  } catch {
    if (res.headersSent) res.destroy();
    else res.writeHead(502).end();
  }
});
server.listen(0, '127.0.0.1', () => console.log(`Forwarder listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
