// Long-running commands (serve, simulate) stop cleanly on Ctrl+C, on a service manager's SIGTERM,
// and when the reader of their output goes away (`loopgate serve | head -1`), as a C program would on SIGPIPE.

const stops = new Set<() => void>();
let readerGone = false;

/** Resolves when the process receives SIGINT or SIGTERM, or its output has no reader any more. */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    if (readerGone) return resolve();
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      stops.delete(stop);
      resolve();
    };
    stops.add(stop);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * Standard output or error lost its reader (`| head -1` read its line and left). A command waiting
 * in untilSignal() stops as on Ctrl+C (the log is flushed); any other ends here, quietly, with the
 * exit code it has so far (0 when none): a `| head` is how a user says "enough".
 */
export function outputReaderGone(): void {
  if (readerGone) return;
  readerGone = true;
  if (stops.size === 0) process.exit(process.exitCode ?? 0);
  for (const stop of [...stops]) stop();
}
