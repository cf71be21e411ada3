// The Responses WebSocket played from a cassette: each `response.create` answered in turn, its messages at their
// recorded times after it (scaled by speed).
import WebSocket, { type RawData } from 'ws';
import { CASSETTE_MISS_CODE } from '../core/cassette.js';
import { MISS_STATUS } from './miss-message.js';
import type { PlayerState } from './player-state.js';
import { isCreate, parse, WS_METHOD } from './recordings.js';

type TurnState = Pick<PlayerState, 'recordings' | 'misses' | 'speed' | 'redact'>;

export function replayWebSocket(state: TurnState, ws: WebSocket, path: string): void {
  let queue = Promise.resolve();
  ws.on('message', (data: RawData, isBinary: boolean) => {
    const at = performance.now();
    if (isBinary) return;
    const text = (Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer)).toString('utf8');
    queue = queue.then(() => answerMessage(state, ws, path, text, at)).catch(() => ws.terminate());
  });
  ws.on('error', () => undefined);
}

async function answerMessage(state: TurnState, ws: WebSocket, path: string, text: string, at: number): Promise<void> {
  const body = parse(state.redact ? state.redact(text) : text);
  if (!isCreate(body)) return;
  const turn = state.recordings.takeTurn(path, body);
  if (!turn) {
    // The Responses WebSocket's own error event, as the service sends one (Codex shows its message).
    const { message, param } = state.misses.missed({ method: WS_METHOD, path, body });
    const error = { type: 'invalid_request_error', code: CASSETTE_MISS_CODE, param, message };
    ws.send(JSON.stringify({ type: 'error', status: MISS_STATUS, error }));
    return;
  }
  for (const e of turn) {
    const due = at + e.at * state.speed - performance.now();
    if (due > 1) await new Promise((r) => setTimeout(r, due));
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(e.data);
  }
}
