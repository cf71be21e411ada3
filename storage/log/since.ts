// `--since 15m|2h|1d|90s|1w` or an ISO time → the earliest record time to keep.
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Returns the cut-off Date, or throws an Error that says what to write instead. */
export function parseSince(value: string, now: Date = new Date()): Date {
  const v = value.trim();
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/i.exec(v);
  if (m) return new Date(now.getTime() - Number(m[1]) * UNIT_MS[m[2].toLowerCase()]);
  // A date alone is local midnight, as `usage --by day` groups by the local date (Date.parse would take UTC
  // midnight); both spellings: 2026-11-26 and ccusage's 20261126.
  const day = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(v);
  if (day && (v.length === 8 || v.length === 10)) {
    const [y, mo, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const local = new Date(y, mo - 1, d);
    if (local.getFullYear() === y && local.getMonth() === mo - 1 && local.getDate() === d) return local;
  }
  // Only strings that look like a date: Date.parse accepts far too much. A time without a zone is local too.
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.test(v)) {
    const t = Date.parse(v);
    if (!Number.isNaN(t)) return new Date(t);
  }
  throw new Error(
    `--since "${value}" is neither a duration (e.g. 15m, 2h, 1d) nor a date (2026-11-21 or 20261121, local midnight) nor an ISO time (e.g. 2026-11-21T09:30:00Z)`,
  );
}
