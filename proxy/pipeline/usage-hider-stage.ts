// A chat stream Loopgate asked usage of (include_usage, relay.ts): the usage
// chunk and each `"usage":null` are cut out of the client's copy, over bytes
// (rules/protocols/chat-stream-usage.ts). A chunk without them passes on as
// the same Buffer.
import type { StreamStage } from './stream-stage.js';

export function usageHiderStage(hider: { push(chunk: Buffer): Buffer; end(): Buffer }): StreamStage {
  return {
    onChunk: (buf) => hider.push(buf),
    onEnd: () => hider.end(),
  };
}
