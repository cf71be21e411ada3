// Large bodies pass through as a stream of socket-sized Buffers. Each dies at
// once, but V8 frees them only at its next scavenge, and a proxy that allocates
// few JS objects may not run one for tens of MB: RSS grows by the backlog.
// A minor GC after every few MiB of streamed body keeps the backlog bounded
// (about 1 ms each; small requests never reach the threshold).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export const NUDGE_BYTES = 8 * 1024 * 1024;
const LARGE_CHUNK = 8 * 1024;

type Gc = (options?: { type?: 'minor' | 'major' }) => void;
let gc: Gc | null | undefined;
let since = 0;

function collector(): Gc | null {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as Gc;
    } catch {
      gc = null;
    }
  }
  return gc;
}

/**
 * Counts bytes of a streamed body that have been passed on (process-wide).
 * Small chunks are ignored: they come with enough JS allocation per byte
 * (SSE events) to trigger scavenges on their own.
 */
export function streamedBytes(n: number): void {
  if (n < LARGE_CHUNK) return;
  since += n;
  if (since < NUDGE_BYTES) return;
  since = 0;
  collector()?.({ type: 'minor' });
}
