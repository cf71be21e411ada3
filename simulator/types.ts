// What every protocol module provides to the server: body validation and the
// reply in both shapes (one JSON body, or a list of SSE events).
import type { SimError } from './relay-errors.js';
import type { Protocol } from '../rules/protocols/index.js';
import type { CachedPrompt } from './prompt-cache.js';

export interface ParsedRequest {
  model: string;
  stream: boolean;
  body: Record<string, unknown>;
}

export interface RenderContext {
  requestId: string;
  model: string;
  /** The fixture marks the model as a reasoner (chat sends `reasoning_content` first). */
  reasoning: boolean;
  /** Number of text chunks in a stream (`x-sim-chunks`). */
  chunks: number;
  /** Pad the reply text to about this many bytes (`x-sim-response-bytes`). */
  responseBytes: number;
  /** Unix seconds. */
  created: number;
  /** What the prompt cache did with this prompt (prompt-cache.ts); absent: nothing cached. */
  promptCache?: CachedPrompt;
}

/** The prompt's tokens as a protocol reports them: uncached, read, written (clamped to the endpoint's own total). */
export function promptTokens(
  total: number,
  cache: CachedPrompt | undefined,
): { uncached: number; read: number; write5m: number; write1h: number } {
  const read = Math.min(cache?.cacheRead ?? 0, total);
  const write5m = Math.min(cache?.cacheWrite5m ?? 0, total - read);
  const write1h = Math.min(cache?.cacheWrite1h ?? 0, total - read - write5m);
  return { uncached: total - read - write5m - write1h, read, write5m, write1h };
}

export interface Rendered {
  json: unknown;
  /** Complete SSE frames, in order, each ending with a blank line. */
  events: string[];
  /** The frame this protocol uses to report an error inside a stream. */
  errorEvent(err: SimError, requestId: string): string;
}

export interface ProtocolModule {
  protocol: Protocol;
  /** Display name used in messages, e.g. "Responses". */
  title: string;
  path: string;
  parse(body: Record<string, unknown>): ParsedRequest;
  render(req: ParsedRequest, ctx: RenderContext): Rendered;
}

/** One SSE frame. `event: null` sends only `data:` (the Chat Completions style). */
export function sseFrame(event: string | null, data: unknown): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`;
}
