// Fault rules (issue 34 §2): what to inject, into which requests, how often.
// One rule is one --fault value (or one loopgate.json "faults" entry):
//
//   KIND [key=value ...]
//
//   KIND      429 | 529 | 500 | 502 | 503 | connect-timeout | read-timeout
//             | cut (mid-stream, after `events`) | stall (mid-stream, `seconds`) | malformed-event | error-event
//             | ws-close (`code`)
//   scope     path=/v1/messages  protocol=chat|responses|messages  model=GLOB  key=NAME  session=ID
//   how often times=N (then the rule passes: "429 twice, then pass" is `429 times=2`)
//             skip=N (let N matching requests through first)   for=DURATION (only this long after start)
//   details   retry-after=SECONDS (429, 529, 503)   events=N (the mid-stream kinds)
//             seconds=N (stall; connect-timeout and read-timeout: how long before the failure)   code=N (ws-close)
//
// e.g. `--fault "429 times=2 retry-after=2 model=claude-*"`. Pure: the parse and the scope test.
import { FAULT_KINDS, MID_STREAM_FAULTS, type FaultKind, type FaultRule } from '../../core/fault.js';
import type { Protocol } from '../../core/routing-facts.js';

const PROTOCOLS: readonly Protocol[] = ['chat', 'responses', 'messages'];
const EXAMPLE = 'e.g. --fault "429 times=2 retry-after=2 model=claude-*"';
/** A model glob longer than this is refused (the longest model id is under 100 characters). */
export const MAX_MODEL_GLOB_CHARS = 256;
/** A request's model name longer than this matches no model glob. */
const MAX_MATCHED_MODEL_CHARS = 1024;

export function parseFaultRule(text: string): { ok: true; rule: FaultRule } | { ok: false; problem: string } {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const kind = words.shift();
  if (!kind || !(FAULT_KINDS as readonly string[]).includes(kind))
    return {
      ok: false,
      problem: `A fault starts with its kind, one of ${FAULT_KINDS.join(', ')} (got ${JSON.stringify(kind ?? '')}); ${EXAMPLE}.`,
    };
  const rule: FaultRule = { text: text.trim(), kind: kind as FaultKind, scope: {}, skip: 0 };
  const given = new Map<string, string>();
  for (const word of words) {
    const eq = word.indexOf('=');
    const name = eq < 0 ? word : word.slice(0, eq);
    const value = eq < 0 ? '' : word.slice(eq + 1);
    if (eq < 0 || value === '') return { ok: false, problem: `"${word}" must be name=value; ${EXAMPLE}.` };
    // A setting given twice would leave the last one in force, silently: one rule scopes one way.
    const first = given.get(name);
    if (first !== undefined)
      return {
        ok: false,
        problem: `${name.slice(0, 40)} is given twice in one fault ("${first.slice(0, 80)}" and "${word.slice(0, 80)}"): give it once, or give each its own --fault.`,
      };
    given.set(name, word);
    const problem = setField(rule, name, value);
    if (problem) return { ok: false, problem };
  }
  if (rule.kind === 'ws-close' && rule.closeCode === undefined) rule.closeCode = 1011;
  if (rule.kind === 'stall' && rule.stallS === undefined) rule.stallS = 30;
  return { ok: true, rule };
}

function setField(rule: FaultRule, name: string, value: string): string | undefined {
  const whole = (min: number, max: number): number | string => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      return `${name} takes a whole number from ${min} to ${max} (got "${value}").`;
    return Number(value);
  };
  const set = (n: number | string, apply: (v: number) => void) => (typeof n === 'string' ? n : void apply(n));
  switch (name) {
    case 'path':
      if (!value.startsWith('/')) return `path must start with / (got "${value}").`;
      rule.scope.path = value;
      return;
    case 'protocol':
      if (!(PROTOCOLS as readonly string[]).includes(value))
        return `protocol is one of ${PROTOCOLS.join(', ')} (got "${value}").`;
      rule.scope.protocol = value as Protocol;
      return;
    case 'model':
      if (value.length > MAX_MODEL_GLOB_CHARS)
        return `model= takes a glob of at most ${MAX_MODEL_GLOB_CHARS} characters (got ${value.length.toLocaleString('en-US')}): name the models with fewer, e.g. model=claude-*.`;
      rule.scope.model = value;
      return;
    case 'key':
    case 'session':
      rule.scope[name] = value;
      return;
    case 'times':
      return set(whole(1, 1_000_000), (v) => (rule.times = v));
    case 'skip':
      return set(whole(0, 1_000_000), (v) => (rule.skip = v));
    case 'for': {
      const ms = durationMs(value);
      if (ms === undefined) return `for takes a duration like 30s, 5m or 1h (got "${value}").`;
      rule.forMs = ms;
      return;
    }
    case 'retry-after':
      if (!['429', '529', '503'].includes(rule.kind)) return `retry-after goes with 429, 529 or 503, not ${rule.kind}.`;
      return set(whole(0, 86_400), (v) => (rule.retryAfterS = v));
    case 'events':
      if (!MID_STREAM_FAULTS.includes(rule.kind))
        return `events goes with the mid-stream kinds (${MID_STREAM_FAULTS.join(', ')}), not ${rule.kind}.`;
      return set(whole(0, 1_000_000), (v) => (rule.events = v));
    case 'seconds':
      if (rule.kind !== 'stall' && rule.kind !== 'connect-timeout' && rule.kind !== 'read-timeout')
        return `seconds goes with stall, connect-timeout or read-timeout, not ${rule.kind}.`;
      return set(whole(1, 3600), (v) => (rule.stallS = v));
    case 'code':
      if (rule.kind !== 'ws-close') return `code goes with ws-close, not ${rule.kind}.`;
      return set(whole(1000, 4999), (v) => (rule.closeCode = v));
    default:
      return `Unknown fault setting "${name}": scope with path, protocol, model, key, session; count with times, skip, for; ${EXAMPLE}.`;
  }
}

function durationMs(text: string): number | undefined {
  const m = /^(\d+)(ms|s|m|h)$/.exec(text);
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * unit;
}

/** What a request offers the scope test. */
export interface FaultTarget {
  path: string;
  protocol?: Protocol;
  model?: string;
  key?: string;
  session?: string;
}

export function inScope(rule: FaultRule, t: FaultTarget): boolean {
  const s = rule.scope;
  if (s.path !== undefined && t.path.split('?')[0] !== s.path) return false;
  if (s.protocol !== undefined && t.protocol !== s.protocol) return false;
  // A model name past the cap matches no glob: no real one is that long, and matching it would cost its length.
  if (
    s.model !== undefined &&
    (t.model === undefined || t.model.length > MAX_MATCHED_MODEL_CHARS || !globMatch(s.model, t.model))
  )
    return false;
  if (s.key !== undefined && t.key !== s.key) return false;
  if (s.session !== undefined && t.session !== s.session) return false;
  return true;
}

/**
 * `*` any run of characters, `?` one; everything else literal. The glob is cut at its `*`s: the first piece must
 * start the text, the last end it, and each piece between is found leftmost after the one before (taking the
 * earliest place never loses a match a later place would give). One pass over the text per piece at most, so
 * text × glob steps only when a piece holds `?` (found by a scan); a piece without `?` is an indexOf. The old
 * two-pointer match backed up to the last `*` on each mismatch: a 2,000-character glob met by a 300 KB model name
 * took seconds (issue 39 H-9); inScope caps both lengths too.
 */
export function globMatch(glob: string, text: string): boolean {
  const pieces = glob.split('*');
  const first = pieces[0]!;
  if (pieces.length === 1) return first.length === text.length && pieceAt(first, text, 0);
  const last = pieces[pieces.length - 1]!;
  const end = text.length - last.length;
  if (first.length > end || !pieceAt(first, text, 0) || !pieceAt(last, text, end)) return false;
  let from = first.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const piece = pieces[i]!;
    const at = findPiece(piece, text, from, end);
    if (at < 0) return false;
    from = at + piece.length;
  }
  return true;
}

/** `piece` (literal but for `?`) at `text[at...]`. */
function pieceAt(piece: string, text: string, at: number): boolean {
  for (let i = 0; i < piece.length; i++) if (piece[i] !== '?' && piece[i] !== text[at + i]) return false;
  return true;
}

/** The leftmost place from `from` where `piece` fits wholly before `end`, or -1. */
function findPiece(piece: string, text: string, from: number, end: number): number {
  if (!piece.includes('?')) {
    const at = text.indexOf(piece, from);
    return at >= 0 && at + piece.length <= end ? at : -1;
  }
  for (let at = from; at + piece.length <= end; at++) if (pieceAt(piece, text, at)) return at;
  return -1;
}
