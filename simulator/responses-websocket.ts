// The Responses WebSocket transport, where a fixture group turns it on
// (`responses_websocket: true`): `GET /v1/responses` upgraded, then, as in
// Codex's client (codex-api responses_websocket.rs) and the openai SDK's
// ResponsesWS, the client sends `{"type":"response.create", ...the POST body}`
// as a JSON text message and gets back the same events the SSE stream carries,
// one JSON text message each, ending with `response.completed`. Several
// requests may follow on one connection. `generate: false` (Codex's warm-up)
// gets a completed response with no output. Errors come as
// `{"type":"error","status":N,"error":{...}}`, the shape Codex maps back to an
// HTTP status. Where the group has it off, the upgrade gets what a relay
// without the route answers: 404 invalid_url.
import { nestsDeeperThan } from '../rules/json/nesting.js';
import { SIM_MAX_NESTING } from './sim-io.js';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { PROTOCOL_TABLE } from '../rules/protocols/index.js';
import { responsesUsage } from '../rules/protocols/responses.js';
import { WebSocketServer, type WebSocket } from 'ws';
import { authenticate, checkStanding, presentedKey } from './auth.js';
import { errorBody, SimError } from './relay-errors.js';
import { readControls } from './faults.js';
import { unsupportedParams, type FixtureKey } from './fixture.js';
import { isObject, rejectUnsupported } from './check.js';
import { responsesProtocol } from './responses-endpoint.js';
import { recordRequest, type RecordedRequest } from './request-record.js';
import { checkModel, checkProtocol, renderContext, servedModel } from './sim-checks.js';
import { newRequestId, type SimState } from './sim-state.js';

const RESPONSES_PATH = PROTOCOL_TABLE.responses.path;

export function websocketUpgrades(
  state: SimState,
  secrets: () => readonly string[],
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const server = new WebSocketServer({ noServer: true, clientTracking: false });
  return (req, socket, head) => {
    socket.on('error', () => undefined);
    const requestId = newRequestId();
    const rec = recordRequest(req, requestId, secrets());
    state.requests.push(rec);
    const pathname = (req.url ?? '/').split('?')[0]!;
    try {
      if (pathname !== RESPONSES_PATH)
        throw new SimError('invalid_url', `Invalid URL (${req.method ?? 'GET'} ${pathname})`);
      const key = authenticate(state.fixture, presentedKey(req.headers, false));
      checkStanding(key);
      const group = state.fixture.groups[key.group]!;
      if (!group.responses_websocket)
        throw new SimError('invalid_url', `Invalid URL (${req.method ?? 'GET'} ${pathname})`);
      server.handleUpgrade(req, socket, head, (ws) => {
        rec.status = 101;
        rec.websocket = { requests: 0, open: true };
        serveConnection(state, ws, req, rec, key);
      });
    } catch (err) {
      const simErr = err instanceof SimError ? err : new SimError('internal_error', 'Internal simulator error');
      rec.status = simErr.status;
      const body = JSON.stringify(errorBody(simErr, 'openai', requestId));
      socket.end(
        `HTTP/1.1 ${simErr.status} Error\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Oneapi-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
  };
}

function serveConnection(
  state: SimState,
  ws: WebSocket,
  req: IncomingMessage,
  rec: RecordedRequest,
  key: FixtureKey,
): void {
  const controller = new AbortController();
  state.inflight.add(controller);
  // One request at a time, in order, as on an HTTP/1.1 connection.
  let queue = Promise.resolve();
  ws.on('message', (data, isBinary) => {
    queue = queue.then(() => answer(data.toString(), isBinary));
  });
  ws.on('error', () => undefined);
  ws.once('close', () => {
    rec.websocket!.open = false;
    controller.abort();
    state.inflight.delete(controller);
  });

  async function answer(text: string, isBinary: boolean): Promise<void> {
    const requestId = newRequestId();
    try {
      if (isBinary) throw new SimError('invalid_request', 'Binary messages are not supported: send JSON text');
      let event: unknown;
      try {
        event = JSON.parse(text);
      } catch {
        throw new SimError('invalid_json', 'Invalid JSON in the message. Send one JSON object');
      }
      if (!isObject(event)) throw new SimError('invalid_request', 'Invalid message: expected a JSON object');
      if (nestsDeeperThan(event, SIM_MAX_NESTING))
        throw new SimError('invalid_request', `Invalid message: nested deeper than ${SIM_MAX_NESTING} levels`);
      // The client's acknowledgement of a finished response: nothing to answer.
      if (event.type === 'response.processed') return;
      if (event.type !== 'response.create')
        throw new SimError(
          'invalid_request',
          `Unsupported message type ${JSON.stringify(event.type)}: send "response.create"`,
          'type',
        );
      rec.websocket!.requests++;
      const { type: _type, generate, ...body } = event;
      const group = state.fixture.groups[key.group]!;
      const parsed = responsesProtocol.parse({ ...body, stream: true });
      checkProtocol(responsesProtocol, key, group);
      // The upgrade's headers are gone: the record and the answer's `model` say what was served.
      const model = servedModel(state, undefined, rec, parsed.model, key, group);
      checkModel(model, key, group);
      rejectUnsupported(parsed.body, unsupportedParams(group, model), 'responses');
      state.limiter.take(key);
      const controls = readControls(req.headers, state.streamDefaults);
      const rendered = responsesProtocol.render(parsed, renderContext(requestId, model, group, controls));
      const events = rendered.events.map(eventData);
      if (generate === false) return send(warmUp(events));
      for (let i = 0; i < events.length; i++) {
        if (i > 0 && controls.chunkDelayMs > 0)
          await delay(controls.chunkDelayMs, undefined, { signal: controller.signal }).catch(() => undefined);
        if (controller.signal.aborted) return;
        send([events[i]!]);
      }
    } catch (err) {
      const simErr = err instanceof SimError ? err : new SimError('internal_error', 'Internal simulator error');
      send([
        JSON.stringify({ type: 'error', status: simErr.status, ...(errorBody(simErr, 'openai', requestId) as object) }),
      ]);
    }
  }

  function send(messages: string[]): void {
    for (const m of messages) if (ws.readyState === ws.OPEN) ws.send(m);
  }
}

/** The JSON of an SSE frame's `data:` line. */
function eventData(frame: string): string {
  const line = frame.split('\n').find((l) => l.startsWith('data: '));
  return line ? line.slice('data: '.length) : '{}';
}

/** `generate: false`: the response is created and completed with no output, so its id can be the next request's previous_response_id. */
function warmUp(events: string[]): string[] {
  const first = JSON.parse(events[0]!) as { response?: Record<string, unknown> };
  const last = JSON.parse(events[events.length - 1]!) as { response?: Record<string, unknown> };
  if (last.response) {
    last.response.output = [];
    last.response.usage = responsesUsage({});
  }
  return [JSON.stringify(first), JSON.stringify(last)];
}
