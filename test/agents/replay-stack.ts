// The replay side of the agent suites (agent-tape.ts): one real proxy per recorded proxy, each started as
// `loopgate serve --replay DIR --replay-speed 0` starts it (cli/start-serve.ts, in-process), in front of the
// cassette its live twin recorded; then each case's requests are sent again as the agent sent them (the same
// method, path, headers and body, in the same order; a WebSocket upgrade with the same headers and the same
// messages on it), so everything on the proxy's side runs for real, without the agent binaries.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startServe, type StartedServe } from '../../cli/start-serve.js';
import type { RunningProxy } from '../../proxy/server.js';
import { CASSETTE_MISS_CODE } from '../../core/cassette.js';
import { runCredential } from '../../rules/access/run-credential.js';
import { makeCanary } from '../log/canary.js';
import type { KitStack } from '../kit/stack.js';
import { cassetteDir, readTape, type Tape, type TapeRequest } from './agent-tape.js';

/** The kit's stack's proxy side (test/kit/stack.ts), in front of cassettes instead of the simulator. */
export interface ReplayStack<N extends string> extends Omit<KitStack<N>, 'upstream' | 'sim' | 'keys'> {
  /** No real key is held on replay; the canary checks look for the token. */
  keys: Record<string, string>;
  tape: Tape;
  /** Sends a case's requests again, in order; throws on a cassette miss, naming the request. */
  play(name: string): Promise<void>;
}

/** Headers that belong to the connection the agent had, not to the request: the replay's own are sent. */
const CONNECTION_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);
/** The WebSocket handshake's own headers, which the client library makes anew. */
const HANDSHAKE_HEADERS = new Set([
  'upgrade',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-accept',
]);
const REDACTION_TAG = /\[REDACTED:[0-9a-z]+\]/gi;
/** Where an agent puts its credential: the only headers whose redacted value the replay fills in. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key', 'api-key']);

const runCredentials = new Map<string, string>();

/**
 * The credential the agent held, for this replay: the local token, or when `loopgate run` started the agent a
 * credential of the same run (tool, start) made from this replay's token.
 */
function credential(req: TapeRequest, token: string): string {
  if (!req.run) return token;
  const id = `${token} ${req.run.tool} ${req.run.started}`;
  let cred = runCredentials.get(id);
  if (!cred) {
    cred = runCredential(token, { tool: req.run.tool, started: Date.parse(req.run.started), nonce: randomNonce() });
    runCredentials.set(id, cred);
  }
  return cred;
}

const randomNonce = () => randomBytes(6).toString('hex');

/** The agent's headers for this replay: its credential (redacted on the tape) becomes this replay's. */
function sendable(req: TapeRequest, token: string, drop: Set<string>): Record<string, string> {
  const out: Record<string, string> = {};
  const cred = credential(req, token);
  for (const [name, value] of Object.entries(req.headers)) {
    if (CONNECTION_HEADERS.has(name) || drop.has(name)) continue;
    // Another redacted header (Codex's session-id) keeps its tag: the same value for the same original.
    out[name] = CREDENTIAL_HEADERS.has(name) ? value.replace(REDACTION_TAG, cred) : value;
  }
  return out;
}

export async function startReplayStack<N extends string>(suite: string, names: readonly N[]): Promise<ReplayStack<N>> {
  const tape = readTape(suite);
  const token = makeCanary('lg-local-canary-');
  const dir = mkdtempSync(join(tmpdir(), `loopgate-replay-${suite}-`));
  const traffic: ReplayStack<N>['traffic'] = [];
  const hints: string[] = [];
  const logFiles = {} as Record<N, string>;
  const proxies = {} as Record<N, RunningProxy>;
  const served: StartedServe[] = [];
  try {
    for (const name of names) {
      logFiles[name] = join(dir, `${name}.jsonl`);
      const s = await startServe({
        token,
        port: 0,
        bridge: 'auto',
        logFile: logFiles[name],
        logBodies: true,
        onTraffic: (line, record) => traffic.push({ proxy: name, line, record }),
        onHint: (h) => hints.push(h),
        replay: { dir: cassetteDir(suite, name), speed: 0, onMiss: 'fail' },
      });
      served.push(s);
      proxies[name] = s.proxy;
      await s.proxy.refreshModels();
    }
  } catch (err) {
    for (const s of served) await s.close();
    throw err;
  }

  async function play(name: string): Promise<void> {
    const requests = tape.cases[name];
    if (!requests)
      throw new Error(`${suite}: no case "${name}" on the tape: run node scripts/record-agent-cassettes.mjs`);
    for (const [i, req] of requests.entries()) {
      const proxy = proxies[req.proxy as N];
      if (!proxy) throw new Error(`${suite} "${name}" request ${i}: no proxy ${req.proxy}`);
      const what = `${suite} "${name}" request ${i} (${req.method} ${req.path} on ${req.proxy})`;
      const miss = req.messages ? await resendWebSocket(proxy, req, token) : await resendHttp(proxy, req, token);
      if (miss)
        throw new Error(
          `${what}: the cassette has no recording for it (${miss}). The proxy changed what it sends upstream, or ` +
            'the tape is stale: node scripts/record-agent-cassettes.mjs records both again.',
        );
    }
  }

  return {
    proxies,
    logFiles,
    traffic,
    hints,
    token,
    keys: {},
    tape,
    play,
    async close() {
      for (const s of served) await s.close();
    },
  };
}

/** One HTTP request as the agent sent it, its answer read to the end; a cassette miss's message, if it was one. */
function resendHttp(proxy: RunningProxy, req: TapeRequest, token: string): Promise<string | undefined> {
  const body = req.body === undefined ? undefined : Buffer.from(req.body);
  const headers = sendable(req, token, new Set(['content-encoding']));
  if (body) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const r = httpRequest(`${proxy.url}${req.path}`, { method: req.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve(res.statusCode === 400 && text.includes(`"${CASSETTE_MISS_CODE}"`) ? text.slice(0, 2000) : undefined);
      });
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** Events that end a Responses turn on the socket: the agent sends its next message after one of them. */
const TURN_END = new Set(['response.completed', 'response.failed', 'response.incomplete', 'error']);

/**
 * A WebSocket as the agent opened it: the upgrade with its headers, then each message, the next once the turn
 * before it ended (as Codex waits for it), then a normal close. A refused upgrade (426) is the agent's fallback
 * case: the requests after it on the tape carry on over HTTP.
 */
function resendWebSocket(proxy: RunningProxy, req: TapeRequest, token: string): Promise<string | undefined> {
  const url = `${proxy.url.replace(/^http/, 'ws')}${req.path}`;
  const ws = new WebSocket(url, { headers: sendable(req, token, HANDSHAKE_HEADERS), perMessageDeflate: false });
  const messages = [...(req.messages ?? [])];
  return new Promise((resolve, reject) => {
    let miss: string | undefined;
    const next = () => {
      const m = messages.shift();
      if (m === undefined) ws.close(1000);
      else ws.send(m);
    };
    ws.on('unexpected-response', (_r, res) => {
      res.resume();
      res.on('end', () => resolve(undefined));
    });
    ws.on('open', next);
    ws.on('message', (data: Buffer) => {
      let event: { type?: string; error?: { code?: string; message?: string } } = {};
      try {
        event = JSON.parse(data.toString()) as typeof event;
      } catch {
        return;
      }
      if (event.type === 'error' && event.error?.code === CASSETTE_MISS_CODE) miss = event.error.message;
      if (event.type && TURN_END.has(event.type)) next();
    });
    ws.on('error', reject);
    ws.on('close', () => resolve(miss));
  });
}
