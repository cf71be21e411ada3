// Money as every output writes it: the CLI's `sessions`, `usage` and fault
// report, the Traffic view's session rows, the session panel and the status
// bar. One formatter, so a session reads the same figure everywhere (issue 42:
// the grouped view wrote `~$0.0000` for a $0.0000045 session). Pure.
import { isUsdTotal } from '../../core/sane-numbers.js';

/** What a figure that is no estimate reads as: never `$0.00`. */
export const NO_PRICE = 'no price';

/** USD with enough digits to tell small requests apart: $12.34, $0.0123, $0.000418, $0.0000045; "no price" for no figure. */
export function formatUsd(n: number): string {
  if (!isUsdTotal(n)) return NO_PRICE;
  if (n === 0) return '$0';
  if (n >= 1) return `$${n.toFixed(2)}`;
  // Three significant digits, written out (never 2.1e-5), trailing zeros dropped.
  const digits = Math.min(20, 2 - Math.floor(Math.log10(n)));
  return `$${n.toFixed(digits).replace(/\.?0+$/, '')}`;
}
