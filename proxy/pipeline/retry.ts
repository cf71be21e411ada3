// Retry policy from the spec (§7 rules 1-2): never 400/401/403/404; 429 and
// temporary 5xx only when asked (--retries), with full-jitter backoff.

const RETRYABLE = new Set([429, 502, 503, 504]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE.has(status);
}

/**
 * The one failure safe to replay without --retries: the upstream closed an idle
 * keep-alive socket just as we reused it. undici reports that as a SocketError
 * carrying the socket's counters; bytes read earlier on it mean it was reused.
 * A reset on a fresh connection is never replayed: the upstream may already
 * have processed (and billed) the request.
 */
export function isReusedSocketReset(err: unknown): boolean {
  const e = err as { code?: string; socket?: { bytesRead?: number } } | undefined;
  return e?.code === 'UND_ERR_SOCKET' && (e.socket?.bytesRead ?? 0) > 0;
}

/** A timer that an abort cuts short (rejecting with the abort's reason): the default wait between retries. */
export function abortableDelay(ms: number, abort: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    // Aborted already (the client left while a retried answer was drained): no wait at all.
    if (abort.aborted) return reject(abort.reason);
    const timer = setTimeout(done, ms);
    function done() {
      abort.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(abort.reason);
    }
    abort.addEventListener('abort', onAbort, { once: true });
  });
}

/** Full jitter (AWS architecture blog): uniform in [0, min(cap, base * 2^attempt)]. */
export function backoffDelay(attempt: number, baseMs = 500, capMs = 8_000, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(capMs, baseMs * 2 ** attempt));
}

/** The upstream's own hint, in ms: retry-after-ms, then Retry-After (seconds or an HTTP date). */
export function retryAfterMs(
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): number | undefined {
  const ms = Number(headers['retry-after-ms']);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers['retry-after'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
