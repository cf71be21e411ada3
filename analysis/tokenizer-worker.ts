// The tokenizer worker (bundled alone as dist/tokenizer-worker.js): counts
// tokens with gpt-tokenizer's encodings off the proxy's thread, and runs a
// turn's analysis (cache forensics, context breakdown: analysis-jobs.ts) there
// too, so parsing and walking a megabyte body never holds a request (issue 39
// H-2). o200k's table is 2.4 MB of source and takes about a second to load; on
// the proxy's thread that second would stall every request in flight, and in
// dist/cli.js it would be 3.6 MB more for every `loopgate` command to read.
// Each encoding loads on its first use.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { EncodingName, TokenCounter } from '../rules/sessions/context-breakdown.js';
import { runCacheJob, runContextJob } from './analysis-jobs.js';
import type { CountReply, WorkerReply, WorkerRequest } from './tokenizers.js';

/** Text that looks like a special token (<|endoftext|>) is counted as the text it is, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

type Count = (text: string, opts: typeof AS_TEXT) => number;
const loaded = new Map<string, Promise<Count>>();

function encoding(name: EncodingName): Promise<Count> {
  let p = loaded.get(name);
  if (!p) {
    p = (
      name === 'cl100k_base'
        ? import('gpt-tokenizer/encoding/cl100k_base')
        : import('gpt-tokenizer/encoding/o200k_base')
    ).then((m) => m.countTokens as Count);
    loaded.set(name, p);
  }
  return p;
}

async function counterFor(name: EncodingName): Promise<TokenCounter> {
  const count = await encoding(name);
  return { encoding: name, count: (t) => (t ? count(t, AS_TEXT) : 0) };
}

async function answer(msg: WorkerRequest): Promise<WorkerReply> {
  if (msg.kind === 'cache') return { id: msg.id, result: runCacheJob(msg) };
  if (msg.kind === 'context') return { id: msg.id, result: await runContextJob(msg, counterFor) };
  const count = await encoding(msg.encoding);
  return { id: msg.id, counts: msg.texts.map((t) => (t ? count(t, AS_TEXT) : 0)) } satisfies CountReply;
}

/**
 * This thread yields the CPU to the proxy's: on a busy machine a long analysis must not slow the requests. Linux
 * names the thread in /proc/thread-self, and setpriority on its id sets that thread's niceness alone; elsewhere
 * (or where that fails) the worker keeps the process's priority.
 */
function yieldToRequests(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 19);
  } catch {
    // Not Linux, or not allowed: the same priority as the proxy.
  }
}
yieldToRequests();

parentPort?.on('message', (msg: WorkerRequest) => {
  answer(msg).then(
    (reply) => parentPort!.postMessage(reply),
    (err: Error) => parentPort!.postMessage({ id: msg.id, error: err.message } satisfies WorkerReply),
  );
});
