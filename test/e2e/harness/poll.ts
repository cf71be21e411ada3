// Waiting without fixed sleeps: poll a condition until it holds or a deadline passes.

export interface PollOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** What is awaited, for the timeout message. */
  what: string;
  /** Checked on every round; a string aborts the wait with that reason (e.g. "process exited"). */
  abort?: () => string | undefined;
}

/** Resolves with the first truthy value of `probe`; rejects at the deadline or on abort. */
export async function pollUntil<T>(probe: () => T | Promise<T>, opts: PollOptions): Promise<NonNullable<T>> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown;
  for (;;) {
    const aborted = opts.abort?.();
    if (aborted) throw new Error(`gave up waiting for ${opts.what}: ${aborted}`);
    try {
      const value = await probe();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${opts.what}${why}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}
