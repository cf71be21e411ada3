// Budgets (issue 44): caps on estimated cost and on tokens, per session, per
// key (a day, a month) and per `loopgate run`, enforced before a request is
// forwarded. Types and constants only: the rules are in rules/budgets/, the
// book that counts spend in proxy/traffic/budget-book.ts.

/** One cap: estimated USD, tokens, or both (whichever is reached first). */
export interface BudgetCap {
  usd?: number;
  tokens?: number;
  /** `loopgate run --budget-hard`: a stream under way is ended when this cap is reached. */
  hard?: boolean;
}

/** What a cap counts: a session, a key per local day or month, a `loopgate run`. */
export type BudgetScope = 'session' | 'key-day' | 'key-month' | 'run';

/** The caps in force (serve flags, loopgate.json, the editor's settings); `loopgate run --budget` adds a run's own. */
export interface BudgetCaps {
  session?: BudgetCap;
  keyDay?: BudgetCap;
  keyMonth?: BudgetCap;
  /**
   * A model without a price under a cost cap: `refuse` (the default: never silently free) or `tokens`
   * (let through, counted by its tokens only).
   */
  unpriced?: 'refuse' | 'tokens';
  /** --budget-hard: a stream under way is ended, with its protocol's error event, when a cap it counts is reached. */
  hard?: boolean;
}

/** Spend so far against a cap: the estimated USD of the priced answers, and every token. */
export interface BudgetSpend {
  usd: number;
  tokens: number;
}

/** Where a cap stands: under 80 %, at 80 % or more, reached. */
export type BudgetState = 'ok' | 'warning' | 'over';

/** The share of a cap past which a request is marked and the status bar warns. */
export const BUDGET_WARN_RATIO = 0.8;

/** One cap as `loopgate budget` and the local API show it. */
export interface BudgetLine {
  scope: BudgetScope;
  /** The session id, the key name, or the run (`tool@ISO start`). */
  subject: string;
  /** key-day: the local date (2026-12-01); key-month: 2026-12. */
  period?: string;
  cap: BudgetCap;
  spent: BudgetSpend;
  /** What is left of each cap set (never below 0). */
  left: BudgetCap;
  state: BudgetState;
}

/** A record's budget mark (`tail`, the Traffic view): the cap it nears or reached after this request. */
export interface BudgetMark {
  scope: BudgetScope;
  subject: string;
  state: Exclude<BudgetState, 'ok'>;
  cap: BudgetCap;
  spent: BudgetSpend;
}

/** The diagnosis code of a request refused at a cap. */
export const BUDGET_EXCEEDED = 'budget-exceeded';
/** The diagnosis code of a request refused because its model has no price under a cost cap. */
export const BUDGET_UNPRICED = 'budget-unpriced-model';
