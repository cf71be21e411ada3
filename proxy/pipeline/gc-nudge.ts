// Large bodies pass through as a stream of socket-sized Buffers. Each dies at
// once, but V8 frees them only at its next scavenge, and a proxy that allocates
// few JS objects may not run one for tens of MB: RSS grows by the backlog.
// A minor GC after every few MiB of streamed body keeps the backlog bounded
// (about 1 ms each; small requests never reach the threshold).
//
// Decision (issue 24), on capping the young generation from within a plain
// `loopgate serve`: not done. V8 sizes it once, at start: a
// `setFlagsFromString('--max-semi-space-size=4')` here has no effect, and
// `--semi-space-growth-factor=1` (which V8 does read at run time) only
// freezes it at its first size, where more objects get promoted and the old
// generation grows instead (1,000 streams: 163-184 MB against 164-211 MB
// plain and 142-152 MB with the start flag, on a loaded machine). Re-executing
// node with the flag would leave a second process behind the one the user (and
// the benchmark) sees. So the flag stays where a process is started:
// `npm start` and the VS Code extension pass `--max-semi-space-size=4`.
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
