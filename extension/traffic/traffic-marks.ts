// What marks a Traffic row and the detail panel give the requests issue 34
// adds: an answer the proxy injected a fault into (record.fault), and a
// cassette miss (a replay found no recording; nothing went upstream). Words
// only, shared by the tree, the panel and Save as Fixture. Pure: no vscode.
import type { InjectedFault } from '../../core/fault.js';

/** The row's short mark: `fault 429`, `fault cut@3`. */
export function faultLabel(f: InjectedFault): string {
  return `fault ${f.kind}${f.afterEvents !== undefined ? `@${f.afterEvents}` : ''}`;
}

/** `Loopgate injected 429 (rule #3: 429 retry-after=2), retry-after 2 s.` */
export function faultSentence(f: InjectedFault): string {
  const details = [
    f.retryAfterS !== undefined ? `retry-after ${f.retryAfterS} s` : '',
    f.afterEvents !== undefined ? `after ${f.afterEvents} event${f.afterEvents === 1 ? '' : 's'}` : '',
    f.closeCode !== undefined ? `close code ${f.closeCode}` : '',
  ].filter(Boolean);
  return `Loopgate injected ${f.kind} (rule #${f.ruleId}: ${f.rule})${details.length ? `, ${details.join(', ')}` : ''}.`;
}

/** A miss's message as the replay server wrote it (where the request differs from the nearest recording). */
export function missMessage(responseBody: string | undefined): string | undefined {
  try {
    const v = JSON.parse(responseBody ?? '') as { error?: { message?: unknown } } | null;
    return typeof v?.error?.message === 'string' ? v.error.message : undefined;
  } catch {
    return undefined;
  }
}
