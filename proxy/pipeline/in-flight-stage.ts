// The Traffic view's in-flight row of a request whose answer is streaming:
// each chunk (or WebSocket message) of the upstream's answer counted as it
// passes (in-flight.ts throttles the reports). Passes every chunk on untouched.
import type { InFlightProgress } from './exchange.js';
import type { StreamStage } from './stream-stage.js';

export function inFlightStage(progress: InFlightProgress, unit: 'sse' | 'message'): StreamStage {
  return {
    onChunk(buf) {
      if (unit === 'sse') progress.chunk(buf);
      else progress.message(buf);
      return buf;
    },
    onEnd: () => undefined,
  };
}
