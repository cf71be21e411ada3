// Requests under way, for the Traffic view's in-flight rows: when a reader of
// the live feed asked for them (?inFlight=1), a request reports its start once
// its route is chosen (a WebSocket turn: at its response.create), then its
// answer's bytes and events as they arrive (its stream stages count them), at
// most every IN_FLIGHT_PROGRESS_MS (a last report follows a burst). While
// nobody asks, a request does nothing here beyond one check: the c=64 bench
// does not pay for a view that is closed.
import { IN_FLIGHT_PROGRESS_MS, OWN_REQUEST_HEADER, type InFlightRequest } from '../../core/local-api.js';
import { isOwnTraffic } from '../../rules/access/own-traffic.js';
import type { ClientReply } from './client-reply.js';
import type { ProxyContext } from './context.js';
import type { InFlightProgress, RequestSoFar } from './exchange.js';

const LF = 0x0a;

/**
 * Reports the request's start (when a reader of the live feed watches requests under way) and returns what
 * reports its progress; undefined when nobody watches or the ring would not keep it. The caller ends it.
 */
export function reportInFlight(
  ex: RequestSoFar,
  reply: Pick<ClientReply, 'status'>,
  ctx: Pick<ProxyContext, 'ring' | 'redactor' | 'logOwnTraffic'>,
): InFlightProgress | undefined {
  const ring = ctx.ring;
  if (!ring?.watchingInFlight || !isUserRequest(ex, ctx)) return undefined;
  const r = ctx.redactor;
  const paths = ex.paths;
  const state: InFlightRequest = {
    id: ex.id,
    time: ex.time.toISOString(),
    method: ex.req.method ?? 'GET',
    path: r.string(paths ? paths.originalPath + paths.query : (ex.req.url ?? '/')),
    bytes: 0,
    events: 0,
    elapsedMs: 0,
  };
  if (ex.body?.model !== undefined) state.model = r.string(ex.body.model);
  if (ex.body?.stream !== undefined) state.stream = ex.body.stream;
  if (ex.key?.slot?.name) state.key = ex.key.slot.name;
  if (ex.route?.bridge) state.bridge = ex.route.bridge;
  let lastSent = 0;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const send = () => {
    timer = undefined;
    if (ended) return;
    lastSent = performance.now();
    state.elapsedMs = Math.round(lastSent - ex.startedAt);
    if (reply.status !== undefined) state.status = reply.status;
    ring.inFlight({ ...state });
  };
  const progressed = () => {
    if (timer) return;
    const wait = lastSent + IN_FLIGHT_PROGRESS_MS - performance.now();
    if (wait <= 0) send();
    else timer = setTimeout(send, wait);
  };
  send();
  let lastWasLf = false;
  return {
    chunk(chunk) {
      state.bytes += chunk.length;
      // An event ends at a blank line: \n\n, also when the two fall in different chunks (\r\n ones too, nearly).
      for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) {
        if (lastWasLf || (i > 0 && chunk[i - 1] === LF) || (i > 1 && chunk[i - 1] === 0x0d && chunk[i - 2] === LF))
          state.events++;
        lastWasLf = false;
      }
      lastWasLf = chunk.length > 0 && chunk[chunk.length - 1] === LF;
      progressed();
    },
    message(buf) {
      state.bytes += buf.length;
      state.events++;
      progressed();
    },
    end() {
      ended = true;
      clearTimeout(timer);
    },
  };
}

/** What the ring would keep: not Loopgate's own endpoints nor the editor's own fetches. */
function isUserRequest(ex: RequestSoFar, ctx: Pick<ProxyContext, 'logOwnTraffic'>): boolean {
  if (ex.req.headers[OWN_REQUEST_HEADER] !== undefined) return false;
  return ctx.logOwnTraffic || !isOwnTraffic(ex.req.method ?? 'GET', ex.paths?.path ?? ex.req.url ?? '/');
}
