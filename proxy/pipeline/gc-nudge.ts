// Large bodies pass through as a stream of socket-sized Buffers. Each dies at
// once, but V8 frees them only at its next scavenge, and a proxy that allocates
// few JS objects may not run one for tens of MB: RSS grows by the backlog.
// A minor GC after every few MiB of streamed body keeps the backlog bounded
// (about 1 ms each; small requests never reach the threshold).
//
// Decision (issue 24), on capping the young generation from within a plain
// `loopgate serve`: not done. With 1,000 streams open V8 grows its new space
// to its maximum (32 MB; old space ~45 MB, array buffers ~10 MB; RSS 157-171
// MB), and only a flag given at start caps it (--max-semi-space-size=4: new
// space 8 MB, RSS 142 MB). V8 sizes the young generation once: a
// `setFlagsFromString('--max-semi-space-size=4')` here has no effect, and
// `--semi-space-growth-factor=1`, which V8 reads at run time, was measured not
// to stop the growth under this load (new space 32 MB, RSS 165 MB).
// Re-executing node with the flag would put a second process behind the one
// the user (and the benchmark) sees, costing more memory in all. So the flag
// stays where a process is started: `npm start` and the VS Code extension
// pass `--max-semi-space-size=4`.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const NUDGE_BYTES = 8 * 1024 * 1024;
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
