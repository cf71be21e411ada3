// What the proxy shows of Codex on its built-in provider with a base-URL override, each turn opened with
// `GET /v1/responses` + `Upgrade: websocket` (codex-websocket.live.test.ts runs the binary,
// codex-websocket.test.ts replays its recording, the upgrade and the messages on the socket included).
import { expect } from 'vitest';
import { until } from '../proxy/stack.js';
import type { WsProxyName } from '../websocket/ws-stack.js';
import type { ProxySide } from './agent-suite.js';

type Stack = ProxySide<WsProxyName>;

export const SUITE = 'codex-websocket';

const recordsOn = (stack: Stack, proxy: WsProxyName, before: number) =>
  stack.traffic
    .slice(before)
    .filter((t) => t.proxy === proxy)
    .map((t) => t.record);

export const CASES = {
  wsOff: {
    title:
      'a group without the transport: one 426 per upgrade, and each turn falls back to HTTPS on the first try, with no protocol-unsupported',
    async facts(stack: Stack, before: number) {
      const recs = await until(
        () => {
          const r = recordsOn(stack, 'wsOff', before);
          return r.filter((x) => x.method === 'POST').length >= 2 ? r : undefined;
        },
        10_000,
        'the POSTs after the fallback',
      );
      const upgrades = recs.filter((r) => r.method === 'GET');
      expect(upgrades.length).toBeGreaterThanOrEqual(1);
      expect(upgrades.every((r) => r.status === 426 && r.diagnosis === 'websocket-unsupported')).toBe(true);
      expect(recs.filter((r) => r.method === 'POST').map((r) => [r.path, r.status, r.model])).toEqual([
        ['/v1/responses', 200, 'gpt-4.1'],
        ['/v1/responses', 200, 'gpt-4.1'],
      ]);
      expect(recs.map((r) => r.diagnosis)).not.toContain('protocol-unsupported');
    },
  },
  wsOn: {
    title: 'a group with the transport: the turn runs over the WebSocket, one 101 connection carrying the request',
    async facts(stack: Stack, before: number) {
      const rec = await until(
        () => recordsOn(stack, 'wsOn', before).find((r) => r.status === 101),
        10_000,
        'the connection record',
      );
      expect(rec).toMatchObject({
        method: 'GET',
        path: '/v1/responses',
        model: 'gpt-4.1',
        stream: true,
        clientAborted: false,
      });
      expect(rec.websocket!.requests).toBeGreaterThanOrEqual(1);
      expect(rec.websocket!.messagesOut).toBeGreaterThan(rec.websocket!.requests);
      expect(rec.params).toEqual(expect.arrayContaining(['model', 'input', 'client_metadata']));
      // No POST: the answer came over the socket.
      expect(recordsOn(stack, 'wsOn', before).filter((r) => r.method === 'POST')).toEqual([]);
    },
  },
  wsOnTool: {
    title: 'a tool round trip over the socket: the exec_command call, then its output as the next request on it',
    async facts(stack: Stack, before: number) {
      const recs = await until(
        () => {
          const r = recordsOn(stack, 'wsOn', before).filter((x) => x.status === 101);
          return r.reduce((n, x) => n + x.websocket!.requests, 0) >= 2 ? r : undefined;
        },
        10_000,
        'the call and the answer to its result',
      );
      // The call and the answer to its result: two requests, whether on one connection or two.
      expect(recs.reduce((n, r) => n + r.websocket!.requests, 0)).toBeGreaterThanOrEqual(2);
      expect(recordsOn(stack, 'wsOn', before).filter((r) => r.method === 'POST')).toEqual([]);
    },
  },
};
