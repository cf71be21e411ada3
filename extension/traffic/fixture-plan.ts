// Save as Fixture (issue 34 §1), the part that decides: which of the chosen
// requests become cassette exchanges (rules/cassettes/cassette-exchange.ts, the one
// conversion every writer shares) and why the others are left out, and the
// sentence that says what was written. Pure: no vscode, no I/O.
import type { CassetteExchange } from '../../core/cassette.js';
import type { TrafficDetail } from '../../core/local-api.js';
import { exchangeOf } from '../../rules/cassettes/cassette-exchange.js';
import { matchKey, type MatchOptions } from '../../rules/cassettes/cassette-match.js';

export interface FixturePlan {
  exchanges: Array<{ id: string; exchange: CassetteExchange }>;
  leftOut: Array<{ id: string; reason: string }>;
}

/**
 * `entries` oldest first (the order the files are numbered in), each the proxy's whole entry, or the reason it
 * could not be read. `scrub` replaces the secrets this machine knows (the ring redacted them already: this is
 * the export's second pass, as Export as HAR does).
 */
export function planFixtures(
  entries: ReadonlyArray<{ id: string; entry?: TrafficDetail; problem?: string }>,
  opts: { match?: MatchOptions; now: Date; scrub?: (text: string) => string },
): FixturePlan {
  const plan: FixturePlan = { exchanges: [], leftOut: [] };
  for (const { id, entry, problem } of entries) {
    if (!entry) {
      plan.leftOut.push({ id, reason: problem ?? 'not in the proxy’s memory any more' });
      continue;
    }
    // exchangeOf leaves out what no upstream said (an injected fault, a cassette miss), as every writer does.
    const x = exchangeOf(entry.record, entry, opts.match ?? {}, opts.now);
    if ('skip' in x) plan.leftOut.push({ id, reason: x.skip });
    else plan.exchanges.push({ id, exchange: opts.scrub ? scrubbed(x, opts.scrub, opts.match) : x });
  }
  return plan;
}

/** The exchange with `scrub` applied to its whole text; keyed again if that changed the body the key was made from. */
function scrubbed(x: CassetteExchange, scrub: (text: string) => string, match?: MatchOptions): CassetteExchange {
  const text = JSON.stringify(x);
  const clean = scrub(text);
  if (clean === text) return x;
  const out = JSON.parse(clean) as CassetteExchange;
  out.key = matchKey(out.request.method, out.request.path, out.request.body, match);
  return out;
}

/** `Saved 2 requests as cassette exchanges in cassettes/; left out 1: 1a2b3c4d (a body was over …).` */
export function describeSaved(plan: FixturePlan, folder: string, short: (id: string) => string): string {
  const n = plan.exchanges.length;
  const saved = n
    ? `Saved ${n === 1 ? '1 request as a cassette exchange' : `${n} requests as cassette exchanges`} in ${folder}`
    : `Nothing saved in ${folder}`;
  if (!plan.leftOut.length) return `${saved}.`;
  const why = plan.leftOut.map((l) => `${short(l.id)} (${l.reason})`).join('; ');
  return `${saved}; left out ${plan.leftOut.length}: ${why}.`;
}
