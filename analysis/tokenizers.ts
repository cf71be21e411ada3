// Token counts, from gpt-tokenizer's encodings in a worker thread
// (tokenizer-worker.ts, bundled as dist/tokenizer-worker.js), and a turn's
// analysis (analysis-jobs.ts) in the same worker: started by the first
// local-API query that asks for one, never by the CLI's start or a request, and
// stopped after a while unused (its tables hold tens of MB). A job past its
// time budget, or a worker that fails (its heap is capped, so a runaway body
// ends the worker, not the proxy), rejects with a NotAnswered; the worker is
// started afresh for the next job. For the extension's counts, withCounts runs
// a synchronous rule twice: once to collect its texts, once with their counts.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { EncodingName, TokenCounter } from '../rules/sessions/context-breakdown.js';
import type { AnalysisJob } from './analysis-jobs.js';

export interface CountRequest {
  id: number;
  kind?: undefined;
  encoding: EncodingName;
  texts: string[];
}

export type CountReply = { id: number; counts: number[] } | { id: number; error: string };

export type WorkerRequest = CountRequest | (AnalysisJob & { id: number });
export type WorkerReply = CountReply | { id: number; result: unknown };

/** A job the worker did not answer: past its time budget, or the worker failed. */
export class NotAnswered extends Error {
  constructor(
    readonly reason: 'time' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

/** How long an analysis job may take, the encoding's first load included, before the worker is restarted. */
const ANALYSIS_BUDGET_MS = 10_000;
/** The worker's heap: a body that would need more ends the worker, never the proxy. */
const WORKER_HEAP_MB = 512;

/** The worker stops after this long without a request (a panel opened again later starts it again). */
const IDLE_MS = 2 * 60_000;

/** dist/tokenizer-worker.js: beside the running bundle, or (running from the sources, as the tests do) the checkout's dist/. */
function workerFile(): string {
  const beside = join(__dirname, 'tokenizer-worker.js');
  return existsSync(beside) ? beside : resolve(__dirname, '../dist/tokenizer-worker.js');
}

let worker: Worker | undefined;
let idle: NodeJS.Timeout | undefined;
let nextId = 1;
const pending = new Map<number, { resolve: (r: WorkerReply) => void; reject: (e: Error) => void }>();

/** Every job of worker `w` fails with `err`; the next job starts a new worker. */
function failAll(w: Worker, err: Error): void {
  if (worker !== w) return;
  worker = undefined;
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

function start(): Worker {
  const w = new Worker(workerFile(), { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  w.on('message', (m: WorkerReply) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    p?.resolve(m);
    if (pending.size === 0) w.unref();
  });
  w.on('error', (err) => failAll(w, new NotAnswered('failed', `the analysis worker failed (${err.message})`)));
  w.on('exit', () => failAll(w, new NotAnswered('failed', 'the analysis worker stopped')));
  return w;
}

/** Sends one request to the worker (started if need be); `budgetMs`: past it the worker is restarted. */
function ask(request: Omit<CountRequest, 'id'> | AnalysisJob, budgetMs?: number): Promise<WorkerReply> {
  worker ??= start();
  const w = worker;
  // Held while a job is pending, so a one-shot CLI waits for it; let go when idle.
  w.ref();
  clearTimeout(idle);
  idle = setTimeout(() => {
    if (worker === w && pending.size === 0) void w.terminate();
  }, IDLE_MS);
  idle.unref();
  const id = nextId++;
  return new Promise((resolvePromise, reject) => {
    const timer =
      budgetMs === undefined
        ? undefined
        : setTimeout(() => {
            // A job that runs away holds the worker: every job on it fails, and the next one gets a new worker.
            failAll(w, new NotAnswered('time', `the analysis took longer than its ${budgetMs / 1000} s budget`));
            void w.terminate();
          }, budgetMs);
    const settle =
      <T>(f: (v: T) => void) =>
      (v: T) => {
        clearTimeout(timer);
        f(v);
      };
    pending.set(id, { resolve: settle(resolvePromise), reject: settle(reject) });
    w.postMessage({ ...request, id } as WorkerRequest);
  });
}

/** Each text's token count in `encoding`. */
export async function countTokens(encoding: EncodingName, texts: string[]): Promise<number[]> {
  if (texts.length === 0) return [];
  const m = await ask({ encoding, texts });
  if ('error' in m) throw new Error(`token counting failed: ${m.error}`);
  if (!('counts' in m)) throw new Error('token counting failed: the worker answered another question');
  return m.counts;
}

/** The worker's answer to an analysis job (what analysis-jobs.ts returns for it). */
export async function runInWorker<T>(job: AnalysisJob): Promise<T> {
  const m = await ask(job, ANALYSIS_BUDGET_MS);
  if ('error' in m) throw new NotAnswered('failed', `the analysis failed (${m.error})`);
  if (!('result' in m)) throw new NotAnswered('failed', 'the analysis worker answered another question');
  return m.result as T;
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

/** Stops the worker now (tests; the proxy's close): its pending jobs fail. */
export async function stopTokenizer(): Promise<void> {
  clearTimeout(idle);
  const w = worker;
  if (!w) return;
  failAll(w, new NotAnswered('failed', 'the analysis worker was stopped'));
  await w.terminate();
}
