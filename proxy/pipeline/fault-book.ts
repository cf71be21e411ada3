// The fault rules a proxy holds (issue 34 §2), each with its counters, and the
// one question the pipeline asks per request: does a rule fire on this one?
// Rules are tried in the order they were armed; the first live rule in scope
// decides (it injects, or lets the request through while it skips). A
// mid-stream rule is in scope of streams only, so other requests never use up
// its count. With nothing armed the pipeline checks one boolean (`armed`) and
// pays nothing else.
import { MID_STREAM_FAULTS, type ArmedFault, type FaultRule, type FaultSource } from '../../core/fault.js';
import { inScope, type FaultTarget } from '../../rules/faults/fault-rules.js';

/** What a request offers the book: the scope test's facts, and whether its answer is a stream. */
export interface FaultRequest extends FaultTarget {
  /** The answer is a stream: SSE (body stream: true) or a WebSocket. */
  streaming: boolean;
  websocket: boolean;
}

/**
 * Which requests a kind can happen to: ws-close to WebSockets; the other mid-stream kinds to streams;
 * the status and timeout kinds to HTTP requests (a WebSocket's upgrade is not given them).
 */
function kindFits(rule: FaultRule, req: FaultRequest): boolean {
  if (rule.kind === 'ws-close') return req.websocket;
  if (MID_STREAM_FAULTS.includes(rule.kind)) return req.streaming;
  return !req.websocket;
}

export class FaultBook {
  #rules: ArmedFault[] = [];
  #armedAtMs = new Map<number, number>();
  #nextId = 1;
  /** A live rule is armed: the one check on the hot path. */
  armed = false;
  /** Some live rule scopes by session (the session is then worked out before the upstream call). */
  needsSession = false;

  constructor(private readonly now: () => number = Date.now) {}

  arm(rule: FaultRule, source: FaultSource, times?: number): ArmedFault {
    const at = this.now();
    const counted = times ?? rule.times;
    const fault: ArmedFault = {
      id: this.#nextId++,
      text: rule.text,
      rule: counted === rule.times ? rule : { ...rule, times: counted },
      source,
      armedAt: new Date(at).toISOString(),
      matched: 0,
      injected: 0,
      remaining: counted ?? null,
      spent: false,
    };
    this.#rules.push(fault);
    this.#armedAtMs.set(fault.id, at);
    this.refresh();
    return fault;
  }

  /** Disarms one rule (false: no such rule) or, without an id, all; returns how many. */
  disarm(id?: number): number {
    const before = this.#rules.length;
    this.#rules = id === undefined ? [] : this.#rules.filter((r) => r.id !== id);
    const gone = before - this.#rules.length;
    if (id === undefined) this.#armedAtMs.clear();
    else this.#armedAtMs.delete(id);
    this.refresh();
    return gone;
  }

  /** Copies, in the order armed (spent ones too). */
  list(): ArmedFault[] {
    this.expire();
    return this.#rules.map((r) => ({ ...r, rule: { ...r.rule, scope: { ...r.rule.scope } } }));
  }

  /** The id of the newest rule armed so far (0: none yet). */
  get lastId(): number {
    return this.#nextId - 1;
  }

  /**
   * The rule that injects into this request, counted as used; undefined: the request goes as it came. `asked`
   * leaves out rules that already judged this request (a WebSocket asks at its upgrade, then per response.create).
   */
  take(req: FaultRequest, asked?: (fault: ArmedFault) => boolean): ArmedFault | undefined {
    this.expire();
    for (const fault of this.#rules) {
      if (fault.spent) continue;
      if (asked?.(fault)) continue;
      const rule = fault.rule;
      if (!kindFits(rule, req)) continue;
      if (!inScope(rule, req)) continue;
      fault.matched++;
      if (fault.matched <= rule.skip) return undefined;
      fault.injected++;
      if (fault.remaining !== null && --fault.remaining <= 0) {
        fault.spent = true;
        this.refresh();
      }
      return { ...fault };
    }
    return undefined;
  }

  /**
   * Gives back a count `take` used for a mid-stream fault whose answer was no stream it could act on (an error, a
   * JSON answer, an upstream that failed): "cut times=1" must cut a stream, not be spent on a 500.
   */
  giveBack(id: number): void {
    const fault = this.#rules.find((r) => r.id === id);
    if (!fault || fault.injected === 0) return;
    fault.injected--;
    if (fault.remaining !== null) {
      fault.remaining++;
      const window = fault.rule.forMs;
      const over = window !== undefined && this.now() - (this.#armedAtMs.get(fault.id) ?? 0) > window;
      if (fault.spent && !over) {
        fault.spent = false;
        this.refresh();
      }
    }
  }

  /** Rules whose window has passed are spent. */
  private expire(): void {
    if (!this.armed) return;
    const now = this.now();
    let changed = false;
    for (const fault of this.#rules) {
      const forMs = fault.rule.forMs;
      if (fault.spent || forMs === undefined) continue;
      if (now - (this.#armedAtMs.get(fault.id) ?? now) > forMs) {
        fault.spent = true;
        changed = true;
      }
    }
    if (changed) this.refresh();
  }

  private refresh(): void {
    const live = this.#rules.filter((r) => !r.spent);
    this.armed = live.length > 0;
    this.needsSession = live.some((r) => r.rule.scope.session !== undefined);
  }
}
