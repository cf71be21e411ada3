// The cassette as the player looks it up (issue 34 §1): HTTP recordings by match key, WebSocket turns by the key
// of their `response.create`, and every recorded request with its client (a miss is diffed against them).
import type { CassetteExchange, RecordedEvent } from '../core/cassette.js';
import { matchKey, type MatchOptions } from '../rules/cassettes/cassette-match.js';
import { jsonTextDeeperThan } from '../rules/json/nesting.js';
import { identifySession } from '../rules/sessions/session-identity.js';

/** A WebSocket turn is keyed under this method: a message, not an HTTP request, on the path. */
export const WS_METHOD = 'WEBSOCKET';

/** A request as it is matched: the recorded ones, and one sent to the player. */
export interface Sent {
  method: string;
  path: string;
  body: unknown;
  client?: string;
}

/** Repeated identical requests get the recordings in order; past the last, the last again. */
interface Slot<T> {
  list: T[];
  next: number;
}

export interface RecordedModel {
  id: string;
  object: 'model';
  created: 0;
  owned_by: 'cassette';
}

export class Recordings {
  private readonly byKey = new Map<string, Slot<CassetteExchange>>();
  /** Each recorded request with the client that made it: a miss is diffed against the same client's recording. */
  readonly requests: Sent[] = [];
  /** WebSocket recordings, as turns: a client `response.create` and the upstream messages that followed it. */
  private readonly turns = new Map<string, Slot<RecordedEvent[]>>();
  private readonly webSocketPaths = new Set<string>();

  constructor(private readonly match: MatchOptions | undefined) {}

  add(x: CassetteExchange): void {
    if (x.response.status === 101) return this.addWebSocket(x);
    // Keyed again with this run's match options: ignore paths added since the recording apply to it too.
    const key = matchKey(x.request.method, x.request.path, x.request.body, this.match);
    pushTo(this.byKey, key, x);
    const client = clientOf(x.request.headers, x.request.body);
    this.requests.push({
      method: x.request.method,
      path: x.request.path,
      body: x.request.body,
      ...(client ? { client } : {}),
    });
  }

  /** All the exchanges recorded under a key (the /models lists are merged from them), undefined when none. */
  recorded(key: string): readonly CassetteExchange[] | undefined {
    return this.byKey.get(key)?.list;
  }

  /** The next recording under a key, in order. */
  takeExchange(key: string): CassetteExchange | undefined {
    return takeNext(this.byKey.get(key));
  }

  hasWebSocketPath(path: string): boolean {
    return this.webSocketPaths.has(path.split('?')[0]!);
  }

  /** The next turn recorded for this `response.create` on the path, in order. */
  takeTurn(path: string, body: unknown): RecordedEvent[] | undefined {
    return takeNext(this.turns.get(matchKey(WS_METHOD, path, body, this.match)));
  }

  /** The models the recorded requests name, each once, as a model list names them. */
  models(): RecordedModel[] {
    const ids = new Set<string>();
    for (const r of this.requests) {
      const model = (r.body as { model?: unknown } | undefined)?.model;
      if (typeof model === 'string') ids.add(model);
    }
    return [...ids].map((id) => ({ id, object: 'model', created: 0, owned_by: 'cassette' }));
  }

  private addWebSocket(x: CassetteExchange): void {
    this.webSocketPaths.add(x.request.path.split('?')[0]!);
    let turn: RecordedEvent[] | undefined;
    let sentAt = 0;
    for (const e of x.response.events ?? []) {
      if (e.from === 'client') {
        const body = parse(e.data);
        if (!isCreate(body)) continue;
        pushTo(this.turns, matchKey(WS_METHOD, x.request.path, body, this.match), (turn = []));
        sentAt = e.at;
        this.requests.push({ method: WS_METHOD, path: x.request.path, body });
      } else if (turn) turn.push({ at: e.at - sentAt, data: e.data });
    }
  }
}

function pushTo<T>(slots: Map<string, Slot<T>>, key: string, item: T): void {
  const slot = slots.get(key) ?? { list: [], next: 0 };
  slot.list.push(item);
  slots.set(key, slot);
}

function takeNext<T>(slot: Slot<T> | undefined): T | undefined {
  if (!slot) return undefined;
  const item = slot.list[Math.min(slot.next, slot.list.length - 1)]!;
  slot.next++;
  return item;
}

/**
 * The client family a request came from (claude-code, codex, anthropic-sdk, …), as the session book names it;
 * undefined when nothing tells (a recording made before cassettes kept the User-Agent).
 */
export function clientOf(headers: Record<string, string | string[] | undefined>, body: unknown): string | undefined {
  const object = typeof body === 'object' && body !== null && !Array.isArray(body);
  const client = identifySession(headers, object ? (body as Record<string, unknown>) : undefined).client;
  return client === 'unknown' ? undefined : client;
}

export function isCreate(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { type?: unknown }).type === 'response.create';
}

/** JSON as a value; text that is not JSON, or nested past MAX_NESTING (as the recorder keeps it), as the text. */
export function parse(text: string): unknown {
  if (text === '') return undefined;
  if (jsonTextDeeperThan(text)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
