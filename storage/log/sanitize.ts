// The last pass before a record leaves the machine (HAR, JSONL export):
// redaction again (patterns, plus any secrets the caller knows), then the
// --team masks. Both are idempotent, so already-redacted records are unchanged.
import { createRedactor, REDACTION_RULES } from '../../rules/redaction/redact.js';
import { createTeamMask, TEAM_RULES } from '../../rules/redaction/team-mask.js';
import type { TrafficRecord } from '../../core/record.js';

export interface SanitizeOptions {
  team?: boolean;
  /** Exact secrets to search for as well (the local token, the key when known). */
  secrets?: string[];
}

export function sanitizeRecords(records: TrafficRecord[], opts: SanitizeOptions = {}): TrafficRecord[] {
  const redactor = createRedactor({ secrets: opts.secrets ?? [] });
  const team = opts.team ? createTeamMask() : null;
  return records.map((rec) => {
    const r = redactor.value(rec);
    if (r.requestHeaders) r.requestHeaders = redactor.headers(r.requestHeaders);
    if (r.responseHeaders) r.responseHeaders = redactor.headers(r.responseHeaders);
    if (!team) return r;
    const t = team.value(r);
    if (r.requestHeaders) t.requestHeaders = team.headers(r.requestHeaders);
    if (r.responseHeaders) t.responseHeaders = team.headers(r.responseHeaders);
    return t;
  });
}

/** What sanitizeRecords applied, for a HAR's log.comment. */
export function appliedRules(opts: SanitizeOptions = {}): string[] {
  return [...REDACTION_RULES, ...(opts.team ? TEAM_RULES.map((r) => `team: ${r}`) : [])];
}
