// "Did you mean" for model IDs: the spec says IDs must be copied exactly from
// /models, so the best help is the nearest IDs that really exist. The one
// algorithm for the proxy's diagnoses, the language server's quick fixes and
// anything the extension shows (issue 12: two copies used to answer
// differently, e.g. `sonnet` got `claude-sonnet-4-6` only from the proxy).

/** Edit distance, or `limit + 1` as soon as it must exceed `limit` (most candidates are far). */
function boundedDistance(a: string, b: string, limit: number, rows: [Uint16Array, Uint16Array]): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let [prev, cur] = rows;
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(
        prev[j]! + 1,
        cur[j - 1]! + 1,
        prev[j - 1]! + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1),
      );
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/**
 * Up to `max` known IDs close to `wanted`, nearest first.
 * - a case-only difference is the answer on its own;
 * - an ID that contains `wanted` or is contained in it (`sonnet` →
 *   `claude-sonnet-4-6`, `gpt-4o` → `gpt-4o-mini`) counts as close whatever the
 *   lengths, ranked among themselves by distance;
 * - otherwise a typo within max(2, 40% of `wanted`) edits. The bound lets a
 *   10,000-ID list be searched without a full distance per candidate.
 */
export function suggestModels(wanted: string, known: readonly string[], max = 3): string[] {
  const w = wanted.toLowerCase();
  const exactCase = known.find((m) => m.toLowerCase() === w);
  if (exactCase) return [exactCase];
  const limit = Math.max(2, Math.floor(w.length * 0.4));
  const scored: Array<{ id: string; score: number }> = [];
  // Two rows reused for every candidate; a candidate longer than w + limit never gets that far.
  const rows: [Uint16Array, Uint16Array] = [
    new Uint16Array(w.length + limit + 2),
    new Uint16Array(w.length + limit + 2),
  ];
  for (const id of known) {
    const k = id.toLowerCase();
    const contains = k.includes(w) || w.includes(k);
    const d = boundedDistance(w, k, limit, rows);
    const score = contains ? Math.min(d, limit) - 0.5 : d;
    if (score <= limit) scored.push({ id, score });
  }
  return scored
    .sort((a, b) => a.score - b.score || a.id.localeCompare(b.id))
    .slice(0, max)
    .map((c) => c.id);
}
