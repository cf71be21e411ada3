// One request as the traffic ring holds it: the redacted record, and the bodies
// as the captured bytes (views of what the capture kept, never copied). A body
// leaves only through the getters below, which redact it with the redactor as
// it is now: a key registered after the request is masked too, and nothing
// hands out the raw bytes. Reading costs the reader, not the request.
import type { TrafficEntry } from '../../core/traffic-entry.js';
import type { TrafficRecord } from '../../core/record.js';
import type { Redactor } from '../../rules/redaction/redact.js';
import { headBytes, redactedHead } from '../../rules/redaction/redacted-head.js';
import { scrubAcrossEvents } from '../../rules/redaction/stream-redact.js';

/**
 * Longest body kept per request or response (characters, after redaction).
 * An agent's whole conversation is usually under this; a longer body is cut
 * and marked, and cannot be replayed whole.
 */
export const RING_BODY_CHARS = 1024 * 1024;

/** Bytes a kept body holds at most: enough for RING_BODY_CHARS characters and the cut's margin. */
const RING_BODY_BYTES = headBytes(RING_BODY_CHARS);

type BodyField = 'requestBody' | 'upstreamRequestBody' | 'responseBody' | 'clientResponseBody';

/** A body as captured: `bytes` bytes in `chunks` (the last may have room to spare). */
export interface CapturedBody {
  chunks: readonly Buffer[];
  bytes: number;
  /** An event stream: a secret streamed in pieces is found in the joined deltas. */
  events?: boolean;
  /** More came than was captured. */
  cut?: boolean;
}

/** What build-record.ts hands the ring: everything but the seq, bodies as captured. */
export interface NewEntry {
  readonly record: Readonly<TrafficRecord>;
  bodies: Partial<Record<BodyField, CapturedBody>>;
  /** The request was over the held size and streamed through unkept. */
  requestStreamed?: boolean;
  hint?: string;
  /** Loopgate answered, cut or lost this itself (its code): never a cassette exchange. */
  localAnswer?: string;
  eventTimes?: number[];
  messageTimes?: number[];
  clientEventTimes?: number[];
  timing?: { loopgateMs: number; upstreamMs: number };
}

/**
 * The ring's redacted texts of recently read bodies, so a reader that comes back (the detail panel, the next
 * keystroke of a filter) does not redact again. Bounded in characters; forgotten whole when a secret is added.
 */
export class RedactedBodies {
  private readonly texts = new Map<string, string>();
  private chars = 0;
  private generation: number;

  constructor(
    readonly redactor: Redactor,
    private readonly maxChars: number,
  ) {
    this.generation = redactor.generation;
  }

  read(key: string, body: CapturedBody): string {
    if (this.generation !== this.redactor.generation) {
      this.texts.clear();
      this.chars = 0;
      this.generation = this.redactor.generation;
    }
    const kept = this.texts.get(key);
    if (kept !== undefined) return kept;
    const text = this.redact(body);
    if (text.length <= this.maxChars) {
      this.texts.set(key, text);
      this.chars += text.length;
      // Oldest read first out (a Map keeps insertion order).
      for (const [k, v] of this.texts) {
        if (this.chars <= this.maxChars) break;
        this.texts.delete(k);
        this.chars -= v.length;
      }
    }
    return text;
  }

  /** Forgets an entry's texts (it left the ring). */
  forget(seq: number): void {
    for (const field of BODY_FIELDS) {
      const key = `${seq}:${field}`;
      const text = this.texts.get(key);
      if (text === undefined) continue;
      this.texts.delete(key);
      this.chars -= text.length;
    }
  }

  private redact(body: CapturedBody): string {
    const r = this.redactor;
    const text = decoded(body);
    return redactedHead(text, RING_BODY_CHARS, (s) => r.string(body.events ? scrubAcrossEvents(s, r) : s)).slice(
      0,
      RING_BODY_CHARS,
    );
  }
}

const BODY_FIELDS: readonly BodyField[] = ['requestBody', 'upstreamRequestBody', 'responseBody', 'clientResponseBody'];

function decoded(body: CapturedBody): string {
  const bytes = Math.min(body.bytes, RING_BODY_BYTES);
  if (body.chunks.length === 1) return body.chunks[0]!.toString('utf8', 0, bytes);
  return Buffer.concat(body.chunks as Buffer[], bytes).toString('utf8');
}

/** Bytes of a captured body: at most RING_BODY_BYTES, taken as views of the capture's chunks. */
export function capturedBody(chunks: readonly Buffer[], bytes: number, more: boolean, events = false): CapturedBody {
  const kept: Buffer[] = [];
  let left = Math.min(bytes, RING_BODY_BYTES);
  for (const chunk of chunks) {
    if (left <= 0) break;
    kept.push(chunk.length <= left ? chunk : chunk.subarray(0, left));
    left -= Math.min(chunk.length, left);
  }
  return { chunks: kept, bytes: Math.min(bytes, RING_BODY_BYTES), events, cut: more || bytes > RING_BODY_BYTES };
}

export class RingEntry implements TrafficEntry {
  readonly record: Readonly<TrafficRecord>;
  readonly hint?: string;
  readonly localAnswer?: string;
  readonly eventTimes?: number[];
  readonly messageTimes?: number[];
  readonly clientEventTimes?: number[];
  readonly timing?: { loopgateMs: number; upstreamMs: number };
  readonly #bodies: Partial<Record<BodyField, CapturedBody>>;
  readonly #streamed: boolean;
  readonly #texts: RedactedBodies;
  /** Whether each body is longer than RING_BODY_CHARS characters, once known. */
  readonly #long: Partial<Record<BodyField, boolean>> = {};

  constructor(
    readonly seq: number,
    entry: NewEntry,
    texts: RedactedBodies,
  ) {
    this.record = entry.record;
    if (entry.hint !== undefined) this.hint = entry.hint;
    if (entry.localAnswer !== undefined) this.localAnswer = entry.localAnswer;
    if (entry.eventTimes) this.eventTimes = entry.eventTimes;
    if (entry.messageTimes) this.messageTimes = entry.messageTimes;
    if (entry.clientEventTimes) this.clientEventTimes = entry.clientEventTimes;
    if (entry.timing) this.timing = entry.timing;
    this.#bodies = entry.bodies;
    this.#streamed = entry.requestStreamed === true;
    this.#texts = texts;
  }

  /** Redacted request body (held requests only: larger ones stream through unkept). */
  get requestBody(): string | undefined {
    return this.#text('requestBody');
  }
  get upstreamRequestBody(): string | undefined {
    return this.#text('upstreamRequestBody');
  }
  get responseBody(): string | undefined {
    return this.#text('responseBody');
  }
  get clientResponseBody(): string | undefined {
    return this.#text('clientResponseBody');
  }
  get requestBodyNote(): 'cut' | 'streamed' | undefined {
    return this.#streamed ? 'streamed' : this.#cut('requestBody');
  }
  get responseBodyNote(): 'cut' | undefined {
    return this.#cut('responseBody');
  }
  get clientResponseBodyNote(): 'cut' | undefined {
    return this.#cut('clientResponseBody');
  }

  /** The bytes the bodies hold (what the ring's budget counts). */
  get bodyBytes(): number {
    let n = 0;
    for (const field of BODY_FIELDS) n += this.#bodies[field]?.bytes ?? 0;
    return n;
  }

  /** The entry as plain data, bodies redacted (what the local API sends). */
  toJSON(): TrafficEntry {
    const out: TrafficEntry = { seq: this.seq, record: this.record };
    const fields = {
      requestBody: this.requestBody,
      upstreamRequestBody: this.upstreamRequestBody,
      responseBody: this.responseBody,
      requestBodyNote: this.requestBodyNote,
      responseBodyNote: this.responseBodyNote,
      hint: this.hint,
      localAnswer: this.localAnswer,
      eventTimes: this.eventTimes,
      messageTimes: this.messageTimes,
      clientResponseBody: this.clientResponseBody,
      clientResponseBodyNote: this.clientResponseBodyNote,
      clientEventTimes: this.clientEventTimes,
      timing: this.timing,
    };
    for (const [k, v] of Object.entries(fields))
      if (v !== undefined) (out as unknown as Record<string, unknown>)[k] = v;
    return out;
  }

  #text(field: BodyField): string | undefined {
    const body = this.#bodies[field];
    return body && this.#texts.read(`${this.seq}:${field}`, body);
  }

  #cut(field: BodyField): 'cut' | undefined {
    const body = this.#bodies[field];
    if (!body) return undefined;
    if (body.cut) return 'cut';
    // Never more characters than bytes: only a body over the cap in bytes is decoded to count them.
    if (body.bytes <= RING_BODY_CHARS) return undefined;
    const long = (this.#long[field] ??= decoded(body).length > RING_BODY_CHARS);
    return long ? 'cut' : undefined;
  }
}
