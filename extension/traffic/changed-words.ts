// Where two versions of one line differ, widened to whole words: what Compare
// with previous turn selects and scrolls to, so a change inside a 6,000-character
// system line is on screen, not a selection of the whole line (issue 42). Pure.

const WORD = /[\p{L}\p{N}_]/u;

/** The changed span of `now` against `before` (start inclusive, end exclusive); an empty span where text was only removed. */
export function changedSpan(before: string, now: string): { start: number; end: number } {
  let start = 0;
  while (start < now.length && start < before.length && now[start] === before[start]) start++;
  let end = now.length;
  let endBefore = before.length;
  while (end > start && endBefore > start && now[end - 1] === before[endBefore - 1]) {
    end--;
    endBefore--;
  }
  // Whole words: a change that starts or ends inside one takes the word in.
  while (start > 0 && start < now.length && WORD.test(now[start - 1]!) && WORD.test(now[start]!)) start--;
  while (end > start && end < now.length && WORD.test(now[end - 1]!) && WORD.test(now[end]!)) end++;
  return { start, end };
}
