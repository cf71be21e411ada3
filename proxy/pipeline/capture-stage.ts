// The record's copy of a streamed answer: the upstream's bytes as they came
// (before any usage hider or translation), handed to the reply's capture.
// Over WebSocket each upstream message is captured as one `data:` event, so
// the record reads a turn like a stream. Passes every chunk on untouched.
import type { ClientReply } from './client-reply.js';
import type { StreamStage } from './stream-stage.js';

export function captureStage(reply: ClientReply): StreamStage {
  return {
    onChunk(buf) {
      reply.logAnswer(buf);
      return buf;
    },
    onEnd: () => undefined,
  };
}

/** A WebSocket turn's: each message counted and captured as one event (binary ones as a note). */
export function messageCaptureStage(reply: ClientReply): StreamStage {
  return {
    onChunk(buf) {
      reply.message(buf, false);
      return buf;
    },
    onEnd: () => undefined,
  };
}
