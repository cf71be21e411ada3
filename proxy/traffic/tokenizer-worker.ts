// The tokenizer worker (bundled alone as dist/tokenizer-worker.js): counts
// tokens with gpt-tokenizer's encodings off the proxy's thread. o200k's table
// is 2.4 MB of source and takes about a second to load; on the proxy's thread
// that second would stall every request in flight, and in dist/cli.js it would
// be 3.6 MB more for every `loopgate` command to read. Each encoding loads on
// its first use.
import { parentPort } from 'node:worker_threads';
import type { CountReply, CountRequest } from './tokenizers.js';

/** Text that looks like a special token (<|endoftext|>) is counted as the text it is, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

type Count = (text: string, opts: typeof AS_TEXT) => number;
const loaded = new Map<string, Promise<Count>>();

function encoding(name: CountRequest['encoding']): Promise<Count> {
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

parentPort?.on('message', (msg: CountRequest) => {
  encoding(msg.encoding).then(
    (count) => {
      const reply: CountReply = { id: msg.id, counts: msg.texts.map((t) => (t ? count(t, AS_TEXT) : 0)) };
      parentPort!.postMessage(reply);
    },
    (err: Error) => parentPort!.postMessage({ id: msg.id, error: err.message } satisfies CountReply),
  );
});
