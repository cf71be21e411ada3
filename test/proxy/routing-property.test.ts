// Issue 24: one routing decision. Over random key sets, lists (saying their
// protocols or not, some failing), models, protocols and --bridge modes, what
// the live proxy does (the key the upstream saw, the native path or the chat
// route, x-loopgate-route) is what rules/keys/key-routing.ts decideRoute says, fed
// the proxy's state as /_loopgate/keys gives it (what it learned from 404
// endpoint_not_supported answers); and before anything was learned, what
// doctor's matrix (routingMatrix) says.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { startProxy } from '../../proxy/server.js';
import { decideRoute, refusalKey, routingMatrix, type KeyModels } from '../../rules/keys/key-routing.js';
import {
  ENDPOINT_TYPE,
  minimalRequest,
  PROTOCOL_ORDER,
  PROTOCOL_TABLE,
  type Protocol,
} from '../../rules/protocols/index.js';
import { startRoutingUpstream, type UpstreamKey, type UpstreamModel } from './routing-upstream.js';
import { postJson, TOKEN } from './stack.js';
import type { BridgeMode } from '../../core/options.js';
import { type LearnedRefusal, type ModelEntry } from '../../core/routing-facts.js';

const PROTOCOLS: Protocol[] = ['chat', 'responses', 'messages'];
const MODELS = ['m1', 'm2', 'm3'];
const protocolSet = fc.subarray(PROTOCOLS);

const modelArb: fc.Arbitrary<UpstreamModel> = fc
  .record({ id: fc.constantFrom(...MODELS), listed: fc.option(protocolSet, { nil: undefined }), hidden: protocolSet })
  // A list that says its protocols tells the truth; one that does not hides what the group serves.
  .map(({ id, listed, hidden }) => (listed ? { id, listed } : { id, serves: hidden }));

const keyArb = fc.record({
  models: fc.uniqueArray(modelArb, { selector: (m) => m.id, maxLength: 3 }),
  listFails: fc.constantFrom(false, false, false, true),
});

const scenario = fc.record({
  keys: fc.array(keyArb, { minLength: 1, maxLength: 3 }),
  bridge: fc.constantFrom<BridgeMode>('auto', 'auto', 'off', 'always'),
  // Each request goes twice: the second must use what the first taught the proxy.
  requests: fc
    .array(fc.record({ model: fc.constantFrom(...MODELS, 'ghost'), protocol: fc.constantFrom(...PROTOCOLS) }), {
      minLength: 1,
      maxLength: 3,
    })
    .map((rs) => rs.flatMap((r) => [r, r])),
});

const secret = (i: number) => `sk-routing-${i}-0123456789abcdefghijkl`;

/** The lists as the proxy reads them from the upstream: by the test's own account, not the proxy's. */
function viewsOf(keys: Array<{ models: UpstreamModel[]; listFails: boolean }>): KeyModels[] {
  return keys.map((k, i) => ({
    name: `k${i}`,
    models: k.listFails
      ? undefined
      : new Map<string, ModelEntry>(
          k.models.map((m) => [
            m.id,
            {
              id: m.id,
              object: 'model',
              owned_by: 'test',
              ...(m.listed ? { supported_endpoint_types: m.listed.map((p) => ENDPOINT_TYPE[p]) } : {}),
            },
          ]),
        ),
  }));
}

it("the proxy routes every request as decideRoute (and doctor's matrix) says", { timeout: 120_000 }, async () => {
  let runs = 0;
  const started = Date.now();
  await fc.assert(
    fc.asyncProperty(scenario, async ({ keys, bridge, requests }) => {
      runs++;
      const upstreamKeys: UpstreamKey[] = keys.map((k, i) => ({
        key: secret(i),
        models: k.models,
        listFails: k.listFails,
      }));
      const upstream = await startRoutingUpstream(upstreamKeys);
      const proxy = await startProxy({
        upstream: `${upstream.url}/v1`,
        keys: keys.map((_, i) => ({ name: `k${i}`, key: secret(i), named: true })),
        bridge,
        token: TOKEN,
        port: 0,
        allowHttp: true,
        logFile: false,
        retries: 0,
      });
      try {
        await proxy.refreshModels();
        const views = viewsOf(keys);
        const matrix = new Map(routingMatrix(views, PROTOCOL_ORDER, { bridge }).map((row) => [row.model, row.routes]));
        let learnedAny = false;
        for (const { model, protocol } of requests) {
          // The proxy's state, as the Model Explorer reads it.
          const state = (await (
            await fetch(`${proxy.url}/_loopgate/keys`, { headers: { authorization: `Bearer ${TOKEN}` } })
          ).json()) as {
            keys: Array<{ name: string; models: Array<{ id: string }> | null }>;
            bridge: BridgeMode;
            refused: LearnedRefusal[];
            now: number;
          };
          expect(state.bridge).toBe(bridge);
          expect(state.keys.map((k) => k.models?.map((m) => m.id) ?? null)).toEqual(
            views.map((v) => (v.models ? [...v.models.keys()] : null)),
          );
          const refused = new Map(state.refused.map((r) => [refusalKey(r.key, r.protocol, r.model), r]));
          const said = decideRoute({ keys: views, model, protocol, bridge, refused, now: state.now });
          if (!learnedAny && said.index !== undefined && matrix.get(model)?.[protocol] !== undefined) {
            expect(matrix.get(model)![protocol]).toBe(`${said.key} ${said.how}`);
          }

          const before = upstream.seen.length;
          const res = await postJson(
            proxy.url,
            PROTOCOL_TABLE[protocol].path,
            minimalRequest(protocol, model, { stream: false, prompt: 'route me' }),
          );
          await res.arrayBuffer();
          const saw = upstream.seen.slice(before);
          const context = JSON.stringify({
            model,
            protocol,
            said,
            status: res.status,
            saw,
            route: res.headers.get('x-loopgate-route'),
          });
          if (said.index === undefined) {
            expect(said.reason, context).toBe('no-key-lists-model');
            expect(res.status, context).toBe(404);
            expect(saw, context).toEqual([]);
            continue;
          }
          const key = secret(said.index);
          const chat = PROTOCOL_TABLE.chat.path;
          expect(saw[0], context).toEqual({
            key,
            path: said.how === 'bridged' ? chat : PROTOCOL_TABLE[protocol].path,
            model,
          });
          // Tried natively and refused with 404 endpoint_not_supported: under auto, the bridge takes over on the same key (and remembers).
          const refusedNow = said.how === 'native' && saw.length === 2;
          if (refusedNow) {
            learnedAny = true;
            expect(bridge, context).toBe('auto');
            expect(saw[1], context).toEqual({ key, path: chat, model });
          } else {
            expect(saw, context).toHaveLength(1);
          }
          expect(res.headers.get('x-loopgate-route'), context).toBe(`${said.key} ${refusedNow ? 'bridged' : said.how}`);
        }
      } finally {
        await proxy.close();
        await upstream.close();
      }
    }),
    { numRuns: 30 },
  );
  // Modest by design: the whole property stays well under 30 s on a shared machine.
  expect(runs).toBe(30);
  expect(Date.now() - started).toBeLessThan(30_000);
});
