// Sessions (issue 33): which agent session a request belongs to, what the
// session cost, why a turn's prompt cache missed, what fills its context and
// how close the rate limit is. The record (core/record.ts) carries the
// per-request facts that go to the log (no content); the local API
// (core/local-api.ts) answers the rest from the ring. Types and the lists' caps only.
import type { TokenCounts } from './token-counts.js';
import type { BudgetCap, BudgetSpend, BudgetState } from './budget.js';

/** A session's budget as its summary carries it. */
export interface SessionBudget {
  cap: BudgetCap;
  spent: BudgetSpend;
  state: BudgetState;
}

/**
 * How a request was tied to its session, most certain first:
 *   header    - the client names its session (Claude Code's x-claude-code-session-id, Codex's session_id, ...);
 *   run       - `loopgate run` gave the process a per-run credential, so the run is the session;
 *   heuristic - same client, same system prompt and a message list that grows from the previous turn's;
 *   single    - nothing to go by: a session of one request.
 */
export type SessionSource = 'header' | 'run' | 'heuristic' | 'single';

export interface SessionRef {
  /** Stable for the session's life; safe to show (never a credential). */
  id: string;
  source: SessionSource;
  /** The client as recognised from its headers ('claude-code', 'codex', 'opencode', 'openai-sdk', ...), else 'unknown'. */
  client: string;
  /** A sub-agent inside the session (Claude Code's Task agents), when the client marks it. */
  agent?: string;
  /** `loopgate run`: the tool and when the run started (ISO). */
  run?: { tool: string; started: string };
}

/** What a request cost, estimated from list prices (rules/sessions/pricing.ts): never a bill. */
export type RequestCost =
  | {
      estimated: number;
      currency: 'USD';
      /** The model whose prices were used: the served one, or what it was matched or mapped to. */
      pricedAs: string;
      source: 'genai-prices' | 'loopgate.json';
      /** exact, dated (less a date suffix), mapped (loopgate.json or the demo fixture) or own (priced outright); absent in a record from before issue 42. */
      match?: 'exact' | 'dated' | 'mapped' | 'own';
      /** The vendor bills this request at a tier the prices lack: the estimate is a floor, and why. */
      floor?: string;
    }
  | { noPrice: string };

/** A served model priced as another, or by a date suffix, a mapping or its own price (core/priced-as.ts says it). */
export interface PricedAs {
  /** The model the upstream says served the request. */
  model: string;
  /** The model whose prices were used. */
  pricedAs: string;
  /** exact, dated, mapped or own (rules/sessions/pricing.ts); absent in a record from before issue 42. */
  match?: 'exact' | 'dated' | 'mapped' | 'own';
}

/** One limit as a rate-limit header family reports it. */
export interface LimitWindow {
  limit?: number;
  remaining?: number;
  /** ISO time the window resets. */
  reset?: string;
}

/** The last rate-limit headers an upstream sent (x-ratelimit-*, anthropic-ratelimit-*, retry-after). */
export interface RateLimitHeadroom {
  /** Which header family: OpenAI's x-ratelimit-* or Anthropic's anthropic-ratelimit-*. */
  style: 'openai' | 'anthropic';
  requests?: LimitWindow;
  tokens?: LimitWindow;
  inputTokens?: LimitWindow;
  outputTokens?: LimitWindow;
  /** anthropic-ratelimit-unified-*: status ('allowed', 'allowed_warning', 'rejected'), reset, utilisation. */
  unified?: { status?: string; reset?: string; utilization?: number };
  /** retry-after, in seconds, when the upstream sent one. */
  retryAfterS?: number;
  /** ISO time the headers were seen. */
  seenAt: string;
}

/** Tokens summed over a session: TokenCounts plus cacheWrite = both write TTLs together. */
export interface SessionTokens extends TokenCounts {
  cacheWrite: number;
}

/** Values each of a session's lists (agents, models, keys, routes) keeps; the distinct ones past it are counted in `more`. */
export const SESSION_LIST_CAP = 20;
/** `more` counts distinct values up to this; at it, "this many or more". */
export const SESSION_MORE_COUNTED = 1000;
export type SessionListName = 'agents' | 'models' | 'keys' | 'routes';

/** One MCP server's calls in a session (`serve --mcp`, `loopgate mcp-wrap`). */
export interface McpServerCalls {
  server: string;
  calls: number;
  /** Their durations summed. */
  ms: number;
  errors: number;
}

export interface SessionSummary {
  id: string;
  source: SessionSource;
  client: string;
  /** Sub-agents seen inside the session. */
  agents: string[];
  run?: { tool: string; started: string };
  /** ISO times of the first and last request. */
  started: string;
  lastSeen: string;
  durationMs: number;
  /** Every request tied to the session, and those that asked a model for an answer. */
  requests: number;
  turns: number;
  errors: number;
  retries: number;
  models: string[];
  /** Key names (never keys). */
  keys: string[];
  /** Canonical paths, with the bridge when one applied. */
  routes: string[];
  tokens: SessionTokens;
  /** Sum of the priced requests; `unpriced` counts those without a price. null when nothing was priced. */
  cost: { estimated: number; currency: 'USD'; unpriced: number } | null;
  /** Served models priced as another (or by a date suffix, a mapping, their own price): core/priced-as.ts. */
  pricedAs?: PricedAs[];
  /** Requests whose estimate is a floor (the vendor bills a tier the prices lack), and the first one's reason. */
  floors?: { requests: number; note: string };
  /** Why cost is null, or what the unpriced requests need (how to add a price). */
  costNote?: string;
  /** When cost is null: the requests that had no price (an answer without usage is not one). */
  unpriced?: number;
  /** cacheRead / every prompt token, over the session's turns with usage; null before any. */
  cacheHitRatio: number | null;
  rateLimit: RateLimitHeadroom | null;
  /** MCP calls routed through Loopgate in this session, by server: how many, their time, how many failed. */
  mcpServers?: McpServerCalls[];
  /** With a session budget cap (issue 44): the cap, what it has spent since its last reset, and where it stands. */
  budget?: SessionBudget;
  /** Distinct values each capped list left out ("and N more"), when it left any out; up to SESSION_MORE_COUNTED. */
  more?: Partial<Record<SessionListName, number>>;
}

/** A part of the request body a cache-miss cause points at. */
export interface BodyRegion {
  part: 'model' | 'tools' | 'system' | 'message' | 'tool-result' | 'other';
  /** System block or message number, from 0. */
  index?: number;
  /** In words: "system block 2", "message 5 (tool result for call_1)", "the tool list". */
  label: string;
  /** JSON pointer into the request body where the first difference is ("/system/2/text"). */
  pointer: string;
}

export type CacheMissCause =
  | { kind: 'first-turn' }
  | { kind: 'changed'; region: BodyRegion }
  | { kind: 'ttl-lapsed'; gapMs: number; ttl: '5m' | '1h' }
  | { kind: 'bridge-dropped-cache-control'; bridge: string }
  | { kind: 'no-cache-markers' }
  | { kind: 'below-minimum'; tokens: number; minimum: number }
  | { kind: 'unexplained' }
  /** The prompts were not compared: past the size budget (`size`), the time budget (`time`), or the worker failed. */
  | { kind: 'not-compared'; reason: 'size' | 'time' | 'failed'; detail: string };

/** A turn's prompt-cache outcome, compared with the session's previous turn. */
export interface CacheOutcome {
  verdict: 'hit' | 'partial' | 'miss' | 'unknown';
  /** cacheRead / every prompt token; null without usage. */
  hitRatio: number | null;
  cacheRead: number;
  /** Tokens written to the cache this turn (both TTLs). */
  written: number;
  /** For a miss or a partial hit: why. */
  cause?: CacheMissCause;
  /** In words, for the Overview: "12 % — system block 2 changed, 1,840 tokens re-written". */
  summary: string;
  /** The turn compared with. */
  previous?: { seq: number; id: string };
}

export interface ContextPart {
  kind: 'system' | 'tools' | 'history' | 'tool-results' | 'new-turn';
  /** "system", "tools: mcp__github (12)", "tools: built-in (9)", ... */
  label: string;
  /** MCP server name for kind 'tools' (mcp__server__tool), 'built-in' otherwise; for 'tool-results', an MCP server's. */
  group?: string;
  tokens: number;
}

/** What fills a request's context, in tokens. */
export interface ContextBreakdown {
  /** The usage's exact prompt count when known, else the tokenizer's sum. */
  total: number;
  /** total comes from the upstream's usage. */
  exact: boolean;
  /** The split is scaled from another model family's tokenizer: an estimate. */
  estimated: boolean;
  tokenizer: string;
  parts: ContextPart[];
  /** Since the session's previous turn. */
  growth?: { tokens: number; previous: { seq: number; id: string } };
}
