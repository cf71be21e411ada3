// "Did you mean" for model IDs: the spec says IDs must be copied exactly from
// /models, so the best help is the nearest IDs that really exist.

function distance(a: string, b: string): number {
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** Up to `max` known IDs close to `wanted`, nearest first. */
export function suggestModels(wanted: string, known: readonly string[], max = 3): string[] {
  const w = wanted.toLowerCase();
  return known
    .map((id) => {
      const k = id.toLowerCase();
      const contains = k.includes(w) || w.includes(k);
      return { id, score: contains ? 0 : distance(w, k) / Math.max(w.length, k.length) };
    })
    .filter((c) => c.score <= 0.5)
    .sort((a, b) => a.score - b.score || a.id.localeCompare(b.id))
    .slice(0, max)
    .map((c) => c.id);
}
