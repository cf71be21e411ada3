// Which price a session's or a usage group's requests were estimated with, where it is not simply the served
// model's own entry in the price table (issue 42): the served model, the model priced as, and how it was found.
// What `sessions`, `usage` (and their --json), `show` and the session panel name. Pure.
import { SESSION_LIST_CAP, type PricedAs, type RequestCost } from './agent-session.js';

/** A request's entry, when its price is not its served model's own exact one. */
export function pricedAsOf(served: string | undefined, cost: RequestCost | undefined): PricedAs | undefined {
  if (!served || !cost || !('estimated' in cost)) return undefined;
  if (cost.pricedAs === served && (cost.match === undefined || cost.match === 'exact')) return undefined;
  return { model: served, pricedAs: cost.pricedAs, ...(cost.match ? { match: cost.match } : {}) };
}

/** Adds the entry once per served model, up to the cap a session's lists keep. */
export function notePricedAs(list: PricedAs[], entry: PricedAs | undefined): void {
  if (!entry || list.length >= SESSION_LIST_CAP || list.some((e) => e.model === entry.model)) return;
  list.push(entry);
}

const HOW: Record<NonNullable<PricedAs['match']>, string> = {
  exact: 'the table lists it under that name',
  dated: 'its date suffix dropped',
  mapped: 'mapped in the prices setting',
  own: 'its own price in the prices setting',
};

/** "priced as claude-sonnet-4-0 (its date suffix dropped)", or "its own price in the prices setting". */
export function pricedAsClause(e: PricedAs): string {
  if (e.match === 'own') return HOW.own;
  return `priced as ${e.pricedAs}${e.match ? ` (${HOW[e.match]})` : ''}`;
}

/** "claude-sonnet-4-20250514 priced as claude-sonnet-4-0 (its date suffix dropped)". */
export function pricedAsText(e: PricedAs): string {
  return e.match === 'own' ? `${e.model}: ${HOW.own}` : `${e.model} ${pricedAsClause(e)}`;
}
