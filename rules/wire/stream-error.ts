// An SSE stream can fail after its 200: the relay sends an error event and
// ends. The status says success, so the log and console must learn it from the
// stream's last events. Pure; works on the captured head+tail excerpt.

/** How many trailing events are looked at: Responses ends with `error` then `response.failed`. */
const LAST_EVENTS = 3;

/** An error member that is not null, or a `"type":"error"` payload. */
const MAY_BE_ERROR = /"error"\s*:\s*[^\sn]|"type"\s*:\s*"error"/;

/**
 * The upstream's error code when the stream ended with an error event
 * (`event: error`, a `{"type":"error"}` payload, or chat's `{"error": {...}}`),
 * `upstream-error-event` when it names none; undefined for a clean stream.
 */
export function streamErrorCode(text: string): string | undefined {
  const events = text.replace(/\r\n/g, '\n').trimEnd().split(/\n\n+/).slice(-LAST_EVENTS);
  for (const ev of events) {
    const lines = ev.split('\n');
    const named = lines.some((l) => /^event:\s*error\s*$/.test(l));
    const data = lines
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .join('\n');
    // Parsed only when it may be one: a clean stream's last events are not (Responses' carry "error":null).
    if (!named && !MAY_BE_ERROR.test(data)) continue;
    let json: unknown;
    try {
      json = data ? JSON.parse(data) : undefined;
    } catch {
      json = undefined;
    }
    const obj = json && typeof json === 'object' ? (json as Record<string, unknown>) : undefined;
    const nested = obj?.error && typeof obj.error === 'object' ? (obj.error as Record<string, unknown>) : undefined;
    if (!named && obj?.type !== 'error' && !nested) continue;
    for (const v of [nested?.code, obj?.code, nested?.type]) {
      if (typeof v === 'string' && v && v !== 'error') return v;
    }
    return 'upstream-error-event';
  }
  return undefined;
}
