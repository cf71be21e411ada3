// The embedded Model-Access API simulator: public API used by the proxy, the
// CLI (`loopgate simulate`), the benchmark and every test.
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import defaultFixtureJson from './default-fixture.json';
import { errorBody, SimError } from './relay-errors.js';
import { loadFixture, validateFixture, type Fixture } from './fixture.js';
import { RateLimiter } from './rate-limit.js';
import { PromptCache } from './prompt-cache.js';
import type { RecordedRequest } from './request-record.js';
import { createHandler } from './sim-server.js';
import type { Intercept, SimState, StreamDefaults } from './sim-state.js';
import { websocketUpgrades } from './responses-websocket.js';

export type { Fixture, FixtureGroup, FixtureKey, FixtureModel, KeyStatus } from './fixture.js';
export type { Protocol } from '../rules/protocols/index.js';
export { FixtureError, fixturePrices, loadFixture, validateFixture } from './fixture.js';
export { type Fault } from './faults.js';
export { fingerprint, type RecordedRequest } from './request-record.js';
export type { Intercept } from './sim-state.js';
export { CREDENTIAL_HEADERS } from '../rules/redaction/credential-headers.js';

export interface SimulatorOptions {
  port?: number;
  host?: string;
  /** A fixture object, or the path of a JSON fixture file. Default: the bundled demo fixture. */
  fixture?: Fixture | string;
  /**
   * Streams without x-sim-* headers: a pause between events and how many text
   * chunks (for clients that cannot send those headers, such as VS Code's chat).
   */
  streamDefaults?: StreamDefaults;
  /** Milliseconds since the epoch, for cache TTLs and rate-limit windows (tests pass a clock they move). Default Date.now. */
  clock?: () => number;
  /**
   * Demo mode (`loopgate serve` with no upstream): a model the fixture lacks but
   * whose family it lists, newer than the demo (an agent's new default), is
   * served as the closest demo model, named in the answer (demo-family.ts).
   * Off by default: a fixture of the user's own answers model_not_found.
   */
  demo?: boolean;
  /** Tests only: a first look at each request before the simulator answers it (test/kit/upstream.ts). */
  intercept?: Intercept;
}

export interface Simulator {
  /** Origin, e.g. http://127.0.0.1:PORT ({site_url}). */
  url: string;
  /** url + '/v1' ({base_url}). */
  baseUrl: string;
  port: number;
  fixture: Fixture;
  requests: RecordedRequest[];
  clearRequests(): void;
  close(): Promise<void>;
}

export const defaultFixture: Fixture = validateFixture(defaultFixtureJson);

/** The default fixture's main key (group "default"). */
export const DEMO_KEY: string = defaultFixture.keys.find((k) => k.group === 'default' && k.status === 'active')!.key;

/**
 * Demo mode holds one key of each group of the default fixture (active, with
 * balance, no model or rate limit), named by group: Claude models on
 * /v1/messages, Responses where the group has it, and the chat-only group
 * through the bridge, all with no configuration.
 */
export const DEMO_KEYS: ReadonlyArray<{ name: string; key: string; named: boolean }> = (() => {
  const seen = new Set<string>();
  return defaultFixture.keys.flatMap((k) => {
    const plain = k.status === 'active' && k.balance > 0 && !('models' in k) && !('rpm' in k);
    if (!plain || seen.has(k.group)) return [];
    seen.add(k.group);
    return [{ name: k.group, key: k.key, named: true }];
  });
})();

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const fixture =
    typeof opts.fixture === 'string'
      ? loadFixture(opts.fixture)
      : opts.fixture
        ? validateFixture(opts.fixture)
        : defaultFixture;
  const host = opts.host ?? '127.0.0.1';
  const clock = opts.clock ?? Date.now;
  const state: SimState = {
    fixture,
    requests: [],
    limiter: new RateLimiter(clock),
    cache: new PromptCache(clock),
    inflight: new Set(),
    streamDefaults: opts.streamDefaults,
    demo: opts.demo,
    intercept: opts.intercept,
  };
  const secrets = fixture.keys.map((k) => k.key);
  const server = createServer(createHandler(state, () => secrets));
  // The Responses WebSocket transport, on the groups whose fixture turns it on.
  server.on(
    'upgrade',
    websocketUpgrades(state, () => secrets),
  );
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // Malformed requests and oversized headers get an answer instead of a bare close.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    const tooBig = err.code === 'HPE_HEADER_OVERFLOW';
    const status = tooBig ? 431 : 400;
    const message = tooBig ? 'Request headers too large: keep them under 16 KiB' : 'Malformed HTTP request';
    const body = JSON.stringify(
      errorBody(new SimError('invalid_request', message, null, undefined, status), 'openai', 'none'),
    );
    socket.end(
      `HTTP/1.1 ${status} ${tooBig ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  const url = `http://${hostInUrl}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    baseUrl: `${url}/v1`,
    port,
    fixture,
    requests: state.requests,
    clearRequests() {
      state.requests.length = 0;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const c of state.inflight) c.abort();
        // Stalled and streaming connections would keep close() waiting forever.
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}
