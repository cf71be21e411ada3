// `loopgate serve --replay DIR` (issue 34 §1): a server on 127.0.0.1 that
// answers as the upstream did, from a cassette. The proxy stands in front of it
// unchanged, so every client, the Traffic view and the log work as they do
// against a real service. Streams are played event by event at their recorded
// times (scaled by `speed`; 0 plays them at once). A request with no recording
// is never sent anywhere: it gets a loud error in its own protocol's dialect,
// with what differs from the nearest recording. Like the simulator, it is its
// own server.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { CassetteExchange } from '../core/cassette.js';
import type { MatchOptions } from '../rules/cassettes/cassette-match.js';
import { answerHttp } from './http-answers.js';
import { Misses, type CassetteMiss } from './miss-message.js';
import { recordedPath, type PassMisses, type PlayerState } from './player-state.js';
import { Recordings } from './recordings.js';
import { replayWebSocket } from './websocket-turns.js';

export interface PlayerOptions {
  exchanges: readonly CassetteExchange[];
  /** Multiplies the recorded times: 1 as recorded, 0 as fast as possible. */
  speed: number;
  match?: MatchOptions;
  /** What the redactor does to a body before it is keyed: recordings were keyed after redaction. */
  redact?: (text: string) => string;
  /** Called for every miss (the console line, the count). */
  onMiss?: (miss: CassetteMiss) => void;
  /**
   * --on-miss record|simulate: a miss is passed on, unchanged (the proxy's key included), to this upstream
   * instead of refused. Its path prefix (`/api` of https://host/api) is what the proxy puts before each path:
   * taken off to match, kept when passed on. `addRecordedModels` (the simulator behind): its model lists also
   * name the recorded models this says yes to, those the demo does not answer at all, or the proxy would refuse a
   * recorded request for one before the cassette could answer it. (A model of a demo family is left out: the
   * proxy already routes it to the key of its family, whose simulator answers a new request for it.)
   */
  passMisses?: PassMisses;
}

export interface CassettePlayer {
  url: string;
  misses: number;
  /** --on-miss record: true once for each key whose miss was passed on (so only those are recorded). */
  takePassed(key: string): boolean;
  /** A recording made while playing (--on-miss record): the same request is answered from it from now on. */
  add(exchange: CassetteExchange): void;
  close(): Promise<void>;
}

export async function startPlayer(opts: PlayerOptions, port = 0): Promise<CassettePlayer> {
  const recordings = new Recordings(opts.match);
  for (const x of opts.exchanges) recordings.add(x);
  const state: PlayerState = {
    recordings,
    misses: new Misses(recordings.requests, opts.match, opts.onMiss),
    passed: new Set<string>(),
    speed: opts.speed,
    match: opts.match,
    redact: opts.redact,
    passMisses: opts.passMisses,
  };
  const sockets = new WebSocketServer({ noServer: true });
  const server: Server = createServer((req, res) => {
    void answerHttp(state, req, res).catch(() => res.destroy());
  });
  // A cassette without WebSocket recordings for the path refuses the upgrade as a route without the transport
  // does (426): the client goes on over HTTP, which the cassette does hold.
  server.on('upgrade', (req: IncomingMessage, socket, head: Buffer) => {
    const path = recordedPath(state, req.url ?? '/');
    if (!recordings.hasWebSocketPath(path)) {
      socket.end('HTTP/1.1 426 Upgrade Required\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(req, socket, head, (ws) => replayWebSocket(state, ws, path));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    get misses() {
      return state.misses.count;
    },
    takePassed: (key) => state.passed.delete(key),
    add: (x) => recordings.add(x),
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of sockets.clients) ws.terminate();
        sockets.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
