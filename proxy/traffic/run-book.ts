// The `loopgate run` processes this proxy knows of (issue 39 H-4): a run
// registers its credential when it starts and says when it ends, so its
// credential is good exactly while the run lives. A run the book never heard
// of (the proxy restarted meanwhile, or an older CLI) counts for a bounded
// time from its start (rules/access/run-credential.ts runLifetime). Every credential
// seen is also given to the redactor as a known secret, so its encoded forms
// are masked like the token's. In memory only, bounded.
import type { Redactor } from '../../rules/redaction/redact.js';
import { runKey, type RunFacts, type RunState } from '../../rules/access/run-credential.js';

const RUN_LIMITS = {
  /** Runs remembered (live or ended); past it the oldest are forgotten (an ended one then falls back to its age). */
  runs: 4096,
  /** Credentials registered with the redactor: each adds its forms to the known-secret search. */
  secrets: 256,
};

export class RunBook {
  private readonly runs = new Map<string, RunState>();
  private readonly secrets = new Set<string>();

  constructor(
    private readonly redactor: Pick<Redactor, 'addSecret'>,
    private readonly limits = RUN_LIMITS,
  ) {}

  state(facts: RunFacts): RunState {
    return this.runs.get(runKey(facts)) ?? 'unknown';
  }

  /** A run began (`loopgate run` registered it) or ended. An ended run does not come back. */
  mark(facts: RunFacts, credential: string, state: 'live' | 'ended'): void {
    const key = runKey(facts);
    if (this.runs.get(key) === 'ended') return;
    this.runs.delete(key);
    this.runs.set(key, state);
    if (this.runs.size > this.limits.runs) this.runs.delete(this.runs.keys().next().value!);
    this.seen(credential);
  }

  /** A verified credential was presented or registered: from now on it is masked in every form the token is. */
  seen(credential: string): void {
    if (this.secrets.has(credential) || this.secrets.size >= this.limits.secrets) return;
    this.secrets.add(credential);
    this.redactor.addSecret(credential);
  }
}
