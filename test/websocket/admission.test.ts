// Issue 32 §3: an HTTP request and a WebSocket upgrade pass one admission step
// (proxy/pipeline/admission.ts). Before it, handle.ts and upgrade.ts each had
// their own copy and the 404 for a path outside /v1/ had drifted (the upgrade's
// lacked the examples). Same bad path, same refusal: status, code and words.
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWsStack, type WsStack } from './ws-stack.js';

let stack: WsStack;

beforeAll(async () => {
  stack = await startWsStack();
});

afterAll(async () => {
  await stack?.close();
});

interface Refusal {
  status: number;
  code: unknown;
  message: unknown;
}

function refusalOf(status: number, text: string): Refusal {
  const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
  // Each answer names its own request id; the rest must match.
  const message = String(body.error?.message).replace(/ \(loopgate request id: [\w-]+\)/, '');
  return { status, code: body.error?.code, message };
}

async function overHttp(path: string, token: string | undefined): Promise<Refusal> {
  const res = await fetch(stack.proxies.wsOn.url + path, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return refusalOf(res.status, await res.text());
}

/** A well-formed upgrade (the ws client's handshake) to the same path: its refusal arrives as an HTTP answer. */
function overUpgrade(path: string, token: string | undefined): Promise<Refusal> {
  const url = stack.proxies.wsOn.url.replace(/^http/, 'ws') + path;
  const ws = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.terminate();
      reject(new Error(`${path} was upgraded`));
    });
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => {
        ws.terminate();
        resolve(refusalOf(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
      });
    });
  });
}

describe('one admission for requests and upgrades', () => {
  const cases: Array<{ path: string; withToken: boolean; status: number; code: string }> = [
    { path: '/v2/responses', withToken: true, status: 404, code: 'not-an-api-path' },
    { path: '/somewhere/else', withToken: true, status: 404, code: 'not-an-api-path' },
    { path: '/v1/a%2Fb', withToken: true, status: 400, code: 'unsafe-path' },
    { path: '/v1/responses', withToken: false, status: 401, code: 'missing-local-token' },
  ];
  for (const c of cases) {
    it(`refuses ${c.path} (${c.withToken ? 'with' : 'without'} the token) in the same words either way`, async () => {
      const token = c.withToken ? stack.token : undefined;
      const http = await overHttp(c.path, token);
      const upgrade = await overUpgrade(c.path, token);
      expect(http.status).toBe(c.status);
      expect(http.code).toBe(c.code);
      expect(upgrade).toEqual(http);
      // The refusal never quotes the token back.
      expect(JSON.stringify(upgrade)).not.toContain(stack.token);
    });
  }
});
