// `loopgate faults` as terminal text: the rules armed in the proxy, then one
// line per injected fault saying what the client did next (rules/faults/fault-report.ts).
// Pure: answer in, text out. Every outside string (a rule as typed, a model, a
// key name, a path) is a term`` hole, so it is escaped on its way to the terminal.
import { joinText, paint, term, type Hole, type TerminalText } from '../rules/terminal/terminal-text.js';
import type { ArmedFault, FaultVerdict } from '../core/fault.js';
import type { FaultsAnswer } from '../core/local-api.js';

const EXAMPLE_RULE = '429 times=1 retry-after=2';

function armedLine(f: ArmedFault): string {
  const left = f.spent ? 'spent' : f.remaining === null ? 'every match' : `${f.remaining} left`;
  return `  #${f.id}  ${f.text}  (${f.source}; matched ${f.matched}, injected ${f.injected}, ${left})`;
}

function verdictLine(v: FaultVerdict, color: boolean): TerminalText {
  const outcome: Hole = v.succeeded
    ? paint(color, 'green', v.summary)
    : v.settled
      ? paint(color, 'red', v.summary)
      : paint(color, 'yellow', v.summary);
  const model = v.model ? ` ${v.model}` : '';
  return term`  ${v.time.slice(11, 19)}  ${v.id.slice(0, 8)}  ${v.fault.kind} (rule #${v.fault.ruleId})  ${v.path}${model}\n    ${outcome}`;
}

/** The whole answer: the armed rules, then the report, oldest first. */
export function faultsText(answer: FaultsAnswer, color: boolean, cli = 'loopgate'): TerminalText {
  const lines: Hole[] = [paint(color, 'bold', 'Armed')];
  if (answer.armed.length === 0) lines.push(`  none (arm one: ${cli} faults arm "${EXAMPLE_RULE}")`);
  else for (const f of answer.armed) lines.push(armedLine(f));
  lines.push(paint(color, 'bold', 'Report'));
  if (answer.report.length === 0) lines.push('  no fault injected yet (or its request has left the traffic ring)');
  else for (const v of answer.report) lines.push(verdictLine(v, color));
  return joinText(lines);
}

/** `loopgate faults arm`: what was armed. */
export function armedText(f: ArmedFault): string {
  return `Armed fault #${f.id}: ${f.text}${f.remaining !== null ? ` (${f.remaining} time${f.remaining === 1 ? '' : 's'})` : ''}.`;
}
