// When a replayed request matches a recorded one (issue 34 §1): exact on what
// decides the answer, blind to what changes between runs for no reason. Those
// are, by default: the order of JSON keys; `metadata`, `user` and the other
// per-user or per-run identifiers at the top level; cache_control TTLs; the
// ids of tool calls and responses (renamed by first appearance, so a result
// still points at its call); and dates and times inside text (an agent's system
// prompt carries today's date). A team adds its own with `ignore` paths. Pure.
import { createHash } from 'node:crypto';
import { REDACTION_MARK_SOURCE } from '../redaction/key-display.js';
import { nestsDeeperThan, TOO_DEEP } from '../json/nesting.js';
import { AGENT_VOLATILE_BLOCKS } from './agent-volatile.js';

/** Top-level fields that identify a user, a run or a cache bucket, never what the model is asked. */
const VOLATILE_TOP_LEVEL = ['metadata', 'user', 'prompt_cache_key', 'safety_identifier', 'client_metadata'];
/**
 * Top-level fields the proxy itself may set on the way upstream: a recording keeps the client's body, a replay
 * is keyed on what the proxy sends (stream_options.include_usage is asked for every chat stream).
 */
const SET_BY_PROXY = ['stream_options'];
/** Metadata a client attaches at any depth, per run and never for the model (Codex: each input item's turn id and time). */
const VOLATILE_ANYWHERE = new Set(['internal_chat_message_metadata_passthrough']);
/** Fields whose string values are ids a client or upstream made up this run. */
const ID_FIELDS = new Set(['id', 'tool_use_id', 'call_id', 'tool_call_id', 'previous_response_id', 'item_id']);
/** ISO dates and times, and the long English date an agent writes into its prompt. */
const DATE_TIME =
  /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b|\b\d{1,2}:\d{2}:\d{2}\b/g;

/**
 * A redaction tag (`[REDACTED:ab12]`) is a hash keyed per run: the same secret gets another tag in the replay
 * than in the recording, so every tag matches every other (what was there is gone either way).
 */
const REDACTION_TAG = new RegExp(`${REDACTION_MARK_SOURCE}[0-9a-f]{4}\\]`, 'g');

/** What Codex writes at the head of each tool output, different on every run: a chunk id and the wall time. */
const TOOL_OUTPUT_NOISE: Array<[RegExp, string]> = [
  [/\bChunk ID: [0-9a-zA-Z]+/g, 'Chunk ID: <id>'],
  [/\bWall time: \d+(?:\.\d+)? seconds\b/g, 'Wall time: <duration>'],
];

export interface MatchOptions {
  /**
   * More paths to leave out: dot-separated, `*` for any key or index, e.g. `tools.*.description`,
   * `messages.0.content`. A path that does not exist is ignored.
   */
  ignore?: readonly string[];
  /** false: only the key order and `ignore` are forgiven (no built-in rules). */
  defaults?: boolean;
}

/**
 * The request as the match sees it: volatile parts removed or renamed, keys sorted. A body nested past
 * MAX_NESTING is not walked: it is TOO_DEEP (the recorder and the player keep such a body as its text instead).
 * Objects are built without a prototype, so a `__proto__` member stays a member and is compared.
 */
export function normaliseForMatch(body: unknown, opts: MatchOptions = {}): unknown {
  if (nestsDeeperThan(body)) return TOO_DEEP;
  const defaults = opts.defaults !== false;
  let value = structuredClone(body);
  if (isObject(value)) for (const f of SET_BY_PROXY) delete value[f];
  if (defaults && isObject(value)) for (const f of VOLATILE_TOP_LEVEL) delete value[f];
  for (const path of opts.ignore ?? []) value = without(value, path.split('.'));
  // Sorted first: ids are then named in an order the client's key order cannot change.
  value = sorted(value, defaults);
  return defaults ? renameIds(value, new Map()) : value;
}

/** The key a recording is filed under and a replay looks up: method, path (query sorted) and the normalised body. */
export function matchKey(method: string, path: string, body: unknown, opts: MatchOptions = {}): string {
  const text = `${method.toUpperCase()} ${canonicalPath(path)}\n${JSON.stringify(normaliseForMatch(body, opts))}`;
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function canonicalPath(path: string): string {
  const q = path.indexOf('?');
  if (q < 0) return path;
  const params = new URLSearchParams(path.slice(q + 1));
  params.sort();
  const query = params.toString();
  return query ? `${path.slice(0, q)}?${query}` : path.slice(0, q);
}

export interface Difference {
  /** Where, as a dot path (`messages.2.content`), '' for the whole body. */
  path: string;
  recorded: string;
  sent: string;
}

/**
 * Where two normalised bodies differ, first in document order, at most `limit`: what a miss shows against the
 * nearest recording. Values are cut to 200 characters; two texts are shown from just before where they part.
 */
export function jsonDifferences(recorded: unknown, sent: unknown, limit = 10): Difference[] {
  const out: Difference[] = [];
  walkDiff(recorded, sent, [], out, limit);
  return out;
}

/**
 * The recording closest to `sent` among those of the same method and path: one the same client made (`client`,
 * rules/sessions/session-identity.ts) when there is one, else any; among those the one with the fewest
 * differences, ties to the most recent. A Claude Code request is never diffed against an SDK's recording of the
 * route while Claude Code's own is there, however many places its own differs in. undefined when none has that
 * method and path.
 */
export function nearestRecording<T extends { method: string; path: string; body: unknown; client?: string }>(
  sent: { method: string; path: string; body: unknown; client?: string },
  recordings: readonly T[],
  opts: MatchOptions = {},
): { recording: T; differences: Difference[] } | undefined {
  const route = (r: { method: string; path: string }) =>
    r.method.toUpperCase() === sent.method.toUpperCase() &&
    canonicalPath(r.path).split('?')[0] === canonicalPath(sent.path).split('?')[0];
  const onRoute = recordings.filter(route);
  const mine = sent.client === undefined ? [] : onRoute.filter((r) => r.client === sent.client);
  const target = normaliseForMatch(sent.body, opts);
  let best: { recording: T; differences: Difference[]; count: number } | undefined;
  for (const r of mine.length ? mine : onRoute) {
    const all = jsonDifferences(normaliseForMatch(r.body, opts), target, 1000);
    if (!best || all.length <= best.count) best = { recording: r, differences: all.slice(0, 10), count: all.length };
  }
  return best && { recording: best.recording, differences: best.differences };
}

function walkDiff(a: unknown, b: unknown, at: string[], out: Difference[], limit: number): void {
  if (out.length >= limit) return;
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n && out.length < limit; i++) walkDiff(a[i], b[i], [...at, String(i)], out, limit);
    return;
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const k of keys) if (out.length < limit) walkDiff(a[k], b[k], [...at, k], out, limit);
    return;
  }
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  // Two long texts that differ late (an agent's prompt) are shown from a little before where they part.
  const from = typeof a === 'string' && typeof b === 'string' ? Math.max(0, firstDifference(a, b) - 60) : 0;
  out.push({ path: at.join('.'), recorded: shown(a, from), sent: shown(b, from) });
}

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** A value as JSON, cut to SHOWN_CHARS; a string from `from` on (`…` marks what was left out either side). */
function shown(v: unknown, from = 0): string {
  if (v === undefined) return '(absent)';
  if (typeof v === 'string' && from > 0) {
    const part = JSON.stringify(v.slice(from, from + SHOWN_CHARS));
    return `…${part}${v.length > from + SHOWN_CHARS ? '…' : ''}`;
  }
  const text = JSON.stringify(v);
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
}

const SHOWN_CHARS = 200;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function without(value: unknown, path: string[]): unknown {
  if (path.length === 0) return undefined;
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(value)) {
    const all = head === '*';
    if (!all && !/^\d+$/.test(head)) return value;
    if (rest.length === 0) return all ? [] : value.filter((_, i) => i !== Number(head));
    return value.map((v, i) => (all || i === Number(head) ? without(v, rest) : v));
  }
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(value)) {
    if (head !== '*' && k !== head) out[k] = v;
    else if (rest.length > 0) out[k] = without(v, rest);
  }
  return out;
}

/** Ids renamed by first appearance (`#1`, `#2`…), the same id to the same name wherever it appears. */
function renameIds(value: unknown, names: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => renameIds(v, names));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(value)) {
    if (VOLATILE_ANYWHERE.has(k)) continue;
    if (ID_FIELDS.has(k) && typeof v === 'string') {
      let name = names.get(v);
      if (name === undefined) names.set(v, (name = `#${names.size + 1}`));
      out[k] = name;
    } else if (k === 'cache_control' && isObject(v)) {
      const { ttl: _ttl, ...rest } = v;
      out[k] = rest;
    } else out[k] = renameIds(v, names);
  }
  return out;
}

/** Keys sorted at every level; with the defaults, dates and times in strings replaced. */
function sorted(value: unknown, dates: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => sorted(v, dates));
  if (typeof value === 'string') {
    const untagged = value.replace(REDACTION_TAG, '[REDACTED]');
    if (!dates) return untagged;
    let out = untagged.replace(DATE_TIME, '<time>');
    for (const [pattern, stand] of TOOL_OUTPUT_NOISE) out = out.replace(pattern, stand);
    // What an agent writes about its surroundings (a git status, its working directory): agent-volatile.ts.
    for (const block of AGENT_VOLATILE_BLOCKS) out = out.replace(block.pattern, block.stand);
    return out;
  }
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(value).sort()) if (value[k] !== undefined) out[k] = sorted(value[k], dates);
  return out;
}
