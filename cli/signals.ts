// Long-running commands (serve, simulate) stop cleanly on Ctrl+C or a service manager's SIGTERM.

/** Resolves when the process receives SIGINT or SIGTERM. */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
