// Token counts for the context breakdown, from gpt-tokenizer's encodings in a
// worker thread (tokenizer-worker.ts, bundled as dist/tokenizer-worker.js):
// started by the first local-API query that asks for a breakdown, never by the
// CLI's start or a request, and stopped after a while unused (its tables hold
// tens of MB). The rule (rules/context-breakdown.ts) counts synchronously, so a
// breakdown runs twice: once to collect its texts, once with their counts.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { EncodingName, TokenCounter } from '../rules/context-breakdown.js';

export interface CountRequest {
  id: number;
  encoding: EncodingName;
  texts: string[];
}

export type CountReply = { id: number; counts: number[] } | { id: number; error: string };

/** The worker stops after this long without a request (a panel opened again later starts it again). */
const IDLE_MS = 2 * 60_000;

/** dist/tokenizer-worker.js: beside the running bundle, or (running from the sources, as the tests do) the checkout's dist/. */
function workerFile(): string {
  const beside = join(__dirname, 'tokenizer-worker.js');
  return existsSync(beside) ? beside : resolve(__dirname, '../../dist/tokenizer-worker.js');
}

let worker: Worker | undefined;
let idle: NodeJS.Timeout | undefined;
let nextId = 1;
const pending = new Map<number, { resolve: (c: number[]) => void; reject: (e: Error) => void }>();

function failAll(err: Error): void {
  for (const p of pending.values()) p.reject(err);
  pending.clear();
  worker = undefined;
}

function start(): Worker {
  const w = new Worker(workerFile());
  w.on('message', (m: CountReply) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if ('error' in m) p?.reject(new Error(`token counting failed: ${m.error}`));
    else p?.resolve(m.counts);
    if (pending.size === 0) w.unref();
  });
  w.on('error', (err) => failAll(err));
  w.on('exit', () => failAll(new Error('the tokenizer worker stopped')));
  return w;
}

/** Each text's token count in `encoding`. */
export function countTokens(encoding: EncodingName, texts: string[]): Promise<number[]> {
  if (texts.length === 0) return Promise.resolve([]);
  worker ??= start();
  const w = worker;
  // Held while a count is pending, so a one-shot CLI waits for it; let go when idle.
  w.ref();
  clearTimeout(idle);
  idle = setTimeout(() => {
    if (worker === w && pending.size === 0) void w.terminate();
  }, IDLE_MS);
  idle.unref();
  const id = nextId++;
  return new Promise((resolvePromise, reject) => {
    pending.set(id, { resolve: resolvePromise, reject });
    w.postMessage({ id, encoding, texts } satisfies CountRequest);
  });
}

/**
 * Runs `compute` with a counter that knows every text's count: a first pass
 * collects the texts (counting 0), the worker counts them in one message, and
 * the second pass gets the counts. `compute` must be pure (same texts both times).
 */
export async function withCounts<T>(encoding: EncodingName, compute: (counter: TokenCounter) => T): Promise<T> {
  const texts = new Set<string>();
  compute({ encoding, count: (t) => (texts.add(t), 0) });
  const list = [...texts];
  const counts = await countTokens(encoding, list);
  const known = new Map(list.map((t, i) => [t, counts[i]!]));
  return compute({ encoding, count: (t) => known.get(t) ?? 0 });
}

/** Stops the worker now (tests; the proxy's close). */
export async function stopTokenizer(): Promise<void> {
  clearTimeout(idle);
  const w = worker;
  worker = undefined;
  if (w) await w.terminate();
}
