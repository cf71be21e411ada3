// TEST-ONLY glue: a tiny HTTP server that serves /v1/responses and /v1/messages
// by running the bridge over a real simulator chat route. It stands in for the
// proxy's forward step so the official SDKs can exercise the translators.

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bridgeKindForPath, openBridge } from '../../proxy/bridge/index.js';

export interface Glue {
  origin: string;
  /** Chat bodies sent upstream, for assertions on the mapping. */
  chatRequests: Record<string, unknown>[];
  close(): Promise<void>;
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of req) parts.push(p as Buffer);
  return Buffer.concat(parts);
}

export async function startGlue(chatOrigin: string, key: string): Promise<Glue> {
  const chatRequests: Record<string, unknown>[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const kind = bridgeKindForPath(req.url ?? '');
      if (req.method !== 'POST' || !kind) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse((await readAll(req)).toString('utf8')) as unknown;
      const opened = openBridge(kind, body, { requestId: `glue${++n}` });
      if (!opened.ok) {
        res.writeHead(opened.status, { 'content-type': 'application/json' }).end(opened.body);
        return;
      }
      const bridge = opened.plan;
      chatRequests.push(JSON.parse(bridge.body.toString('utf8')) as Record<string, unknown>);
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      for (const [h, v] of Object.entries(req.headers))
        if (h.startsWith('x-sim-') && typeof v === 'string') headers[h] = v;
      // What the proxy says of a bridged answer, whichever way it goes.
      const bridgeHeaders = (contentType: string) => ({
        'content-type': contentType,
        'x-loopgate-bridge': bridge.label,
        'x-loopgate-bridge-dropped': bridge.dropped.join(', '),
      });
      const upstream = await fetch(`${chatOrigin}${bridge.path}`, { method: 'POST', headers, body: bridge.body });
      if (upstream.status !== 200) {
        const e = bridge.error(upstream.status, Buffer.from(await upstream.arrayBuffer()));
        res.writeHead(e.status, bridgeHeaders('application/json')).end(e.body);
        return;
      }
      if (!bridge.stream) {
        const out = bridge.result(Buffer.from(await upstream.arrayBuffer()));
        res.writeHead(out.status, bridgeHeaders('application/json')).end(out.body);
        return;
      }
      res.writeHead(200, bridgeHeaders('text/event-stream'));
      const t = bridge.translator;
      try {
        for await (const chunk of upstream.body as unknown as AsyncIterable<Uint8Array>)
          res.write(t.push(Buffer.from(chunk)));
        res.write(t.end());
      } catch (err) {
        res.write(t.fail(`The upstream broke: ${(err as Error).message}`));
      }
      res.end();
    })().catch((err: unknown) => {
      res.destroy(err as Error);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    chatRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
