// Long-running commands (serve, simulate, a following tail) stop cleanly on Ctrl+C, on a service
// manager's SIGTERM, and when the reader of their output goes away (`loopgate serve | head -1`), as a
// C program would on SIGPIPE. Any other command just finishes, its lines dropped, with its own exit code.

const gone = new AbortController();

/**
 * Resolves when the process receives SIGINT or SIGTERM, or its output has no reader any more; with `stop`
 * (a caller that runs the command in its own process, cli/command.ts Io), when that aborts instead.
 */
export function untilSignal(stop?: AbortSignal): Promise<void> {
  if (stop)
    return stop.aborted
      ? Promise.resolve()
      : new Promise((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }));
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      gone.signal.removeEventListener('abort', stop);
      resolve();
    };
    if (gone.signal.aborted) return resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    gone.signal.addEventListener('abort', stop);
  });
}

/** Aborts when standard output or error lost its reader: for a command that follows a feed. */
export const outputGone: AbortSignal = gone.signal;

/** Standard output or error lost its reader (`| head -1` read its line and left). */
export function outputReaderGone(): void {
  if (!gone.signal.aborted) gone.abort();
}
