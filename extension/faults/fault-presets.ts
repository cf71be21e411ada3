// The editor's fault toggle (issue 34 §2), the part that decides: the common
// faults it offers, the rule text each becomes (the --fault grammar,
// rules/faults/fault-rules.ts, which the proxy parses again), what the user types
// checked, and what the status bar item says while a rule is armed. Pure.
import type { ArmedFault, FaultSource } from '../../core/fault.js';
import { parseFaultRule } from '../../rules/faults/fault-rules.js';

export interface FaultPreset {
  label: string;
  /** The rule in the --fault grammar, before the count and the scope. */
  rule: string;
  detail: string;
}

export const FAULT_PRESETS: readonly FaultPreset[] = [
  {
    label: '429 Too Many Requests, retry-after 2 s',
    rule: '429 retry-after=2',
    detail: 'with the protocol’s rate-limit headers: does the client wait 2 s and retry?',
  },
  { label: '529 Overloaded (Anthropic)', rule: '529', detail: 'Anthropic’s overloaded error' },
  { label: '500 Internal Server Error', rule: '500', detail: 'in the protocol’s error envelope' },
  { label: '503 Service Unavailable', rule: '503', detail: 'in the protocol’s error envelope' },
  {
    label: 'Read timeout',
    rule: 'read-timeout',
    detail: 'the answer stops coming: does the client give up and retry?',
  },
  { label: 'Cut a stream after 3 events', rule: 'cut events=3', detail: 'the connection ends mid-stream' },
  { label: 'Stall a stream for 10 s', rule: 'stall seconds=10', detail: 'the stream stops for 10 s, then goes on' },
  {
    label: 'The protocol’s error event',
    rule: 'error-event',
    detail: 'mid-stream: the error event the client’s own protocol defines',
  },
  { label: 'Close a WebSocket (1011)', rule: 'ws-close code=1011', detail: 'a Responses WebSocket closed with a code' },
];

/** "for the next N requests": a whole number, 1 or more; undefined when it is one. */
export function checkTimes(text: string): string | undefined {
  return /^\s*[1-9]\d{0,5}\s*$/.test(text) ? undefined : 'A whole number of requests, from 1 to 999999.';
}

/** The optional model scope: a glob without spaces (`claude-*`, `gpt-4o?`), or nothing. */
export function checkModelGlob(text: string): string | undefined {
  return /\s/.test(text.trim()) ? 'One model name or glob, without spaces (e.g. claude-*).' : undefined;
}

/** The rule the proxy is sent: the preset (or a typed rule) and the model scope; a problem when it does not parse. */
export function faultRuleText(rule: string, model?: string): { rule: string } | { problem: string } {
  const glob = model?.trim();
  const text = glob ? `${rule.trim()} model=${glob}` : rule.trim();
  const parsed = parseFaultRule(text);
  return parsed.ok ? { rule: text } : { problem: parsed.problem };
}

/** Rules that will still inject: armed, not used up, not past their window. */
export function activeFaults(armed: readonly ArmedFault[]): ArmedFault[] {
  return armed.filter((a) => !a.spent);
}

const SOURCE: Record<FaultSource, string> = {
  cli: '--fault',
  config: 'loopgate.json',
  editor: 'the editor',
  api: 'the local API',
};

function count(a: ArmedFault): string {
  return a.remaining === null ? 'every request' : `×${a.remaining}`;
}

/** The status bar item while a rule is armed (`$(zap) fault: 429 ×1`); undefined when none is. */
export function faultStatus(armed: readonly ArmedFault[]): { text: string; tooltip: string } | undefined {
  const active = activeFaults(armed);
  if (!active.length) return undefined;
  const parts = active.slice(0, 2).map((a) => `${a.rule.kind} ${count(a)}`);
  if (active.length > 2) parts.push(`+${active.length - 2}`);
  const text = `$(zap) fault${active.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
  const lines = active.map((a) => {
    const left =
      a.remaining === null ? 'every matching request' : `${a.remaining} more request${a.remaining === 1 ? '' : 's'}`;
    const until = a.rule.forMs
      ? `, until ${new Date(Date.parse(a.armedAt) + a.rule.forMs).toISOString().slice(11, 19)} UTC`
      : '';
    return `#${a.id} ${a.text}: ${left}${until} (from ${SOURCE[a.source] ?? a.source}; injected ${a.injected} so far)`;
  });
  return {
    text,
    tooltip: [`Loopgate is injecting faults:`, ...lines, '', 'Click to disarm.'].join('\n'),
  };
}

/** When the soonest time window of an active rule ends (ms since the epoch): the item is read again then. */
export function nextWindowEnd(armed: readonly ArmedFault[]): number | undefined {
  const ends = activeFaults(armed)
    .filter((a) => a.rule.forMs !== undefined)
    .map((a) => Date.parse(a.armedAt) + a.rule.forMs!);
  return ends.length ? Math.min(...ends) : undefined;
}
