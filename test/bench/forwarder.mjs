// The baseline a user could write in ten lines: http-proxy with a keep-alive
// agent, no guards, no logging. Usage: node forwarder.mjs UPSTREAM_ORIGIN
import http from 'node:http';
import httpProxy from 'http-proxy';

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const proxy = httpProxy.createProxyServer({ target: process.argv[2], agent });
proxy.on('error', (_err, _req, res) => {
  if (res.headersSent) return res.destroy();
  res.writeHead(502).end();
});
const server = http.createServer((req, res) => proxy.web(req, res));
server.listen(0, '127.0.0.1', () => console.log(`Forwarder listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
