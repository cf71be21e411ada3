// `loopgate faults`: the fault rules a running proxy holds and, for each fault
// it injected, what the client did next (retried or not, after how long against
// the retry-after, switched model or key, succeeded, the tokens it cost).
// `faults arm RULE` arms one more, `faults clear [ID]` disarms.
import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command } from './command.js';
import { connectToProxy, CONNECTION_OPTIONS, CONNECTION_USAGE, localApiOf } from './proxy-connection.js';
import { useColor } from './color.js';
import { cliInvocation } from './invocation.js';
import { LocalApiError } from '../client/local-api-client.js';
import { LOCAL_ERROR_CODES } from '../core/local-api.js';
import { parseFaultRule } from '../rules/faults/fault-rules.js';
import { armedText, faultsText } from '../presentation/fault-text.js';

export const faultsCommand: Command = {
  name: 'faults',
  summary: 'Show the armed fault rules of a running proxy and what clients did after each fault; arm or clear',
  usage: `Usage: loopgate faults [--json] [--proxy URL]
       loopgate faults arm "RULE" [--times N] [--proxy URL]
       loopgate faults clear [ID] [--proxy URL]

Without a subcommand: the rules armed in the proxy (from serve --fault,
loopgate.json, the editor or \`faults arm\`), then one line per fault injected,
oldest first, saying what the client did next: retried or not, after how long
against the retry-after it was given, whether it switched model or key,
whether it then succeeded, and the tokens the failed answers used. A verdict
is settled once the client succeeded or sent no retry for a quiet time (60 s
after the retry-after). See docs/faults.md.

  arm "RULE"     Arm one rule, in serve's --fault grammar, e.g.
                 loopgate faults arm "429 times=1 retry-after=2 path=/v1/messages"
  --times N      Inject N times, then pass (overrides the rule's times=).
  clear [ID]     Disarm the rule with this id (\`loopgate faults\` shows it),
                 or every rule.

Options:
  --json         The proxy's answer as one JSON object: {armed: [...], report: [...]}
                 (each report item: fault, attempts, retries, firstWaitMs,
                 honouredRetryAfter, switchedModel, succeeded, tokensSpent, settled, summary).
${CONNECTION_USAGE}

Exit codes: 0 done, 1 no such rule to clear, 2 bad usage or a rule that does not
parse, 3 no Loopgate proxy with this token answers.`,
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { ...CONNECTION_OPTIONS, json: { type: 'boolean' }, times: { type: 'string' } },
    });
    const [sub, ...rest] = positionals;
    if (sub !== undefined && sub !== 'arm' && sub !== 'clear')
      throw new UsageError(
        `unknown subcommand "${sub.slice(0, 40)}": use \`faults\`, \`faults arm "RULE"\` or \`faults clear [ID]\`.`,
      );
    if (values.times !== undefined && sub !== 'arm') throw new UsageError('--times goes with `faults arm "RULE"`.');
    // Checked before the proxy is asked: a mistake is said even when none runs.
    const plan = sub === 'arm' ? armPlan(rest, values.times) : sub === 'clear' ? clearPlan(rest) : undefined;
    const conn = await connectToProxy('faults', values, io);
    if (typeof conn === 'number') return conn;
    const api = localApiOf(conn);
    try {
      if (plan && 'rule' in plan) {
        const { armed } = await api.armFault({
          rule: plan.rule,
          ...(plan.times ? { times: plan.times } : {}),
          source: 'cli',
        });
        io.out(values.json ? JSON.stringify({ armed }) : armedText(armed));
      } else if (plan) {
        const answer = await api.disarmFaults(plan.id);
        io.out(
          values.json
            ? JSON.stringify(answer)
            : `Disarmed ${answer.disarmed} fault rule${answer.disarmed === 1 ? '' : 's'}.`,
        );
      } else {
        const answer = await api.faults();
        io.out(values.json ? JSON.stringify(answer) : faultsText(answer, useColor(io), cliInvocation(io.env).command));
      }
    } catch (err) {
      if (!(err instanceof LocalApiError)) throw err;
      io.err(`loopgate faults: ${err.message}`);
      if (err.code === LOCAL_ERROR_CODES.badFaultRule) return EXIT.usage;
      if (err.code === LOCAL_ERROR_CODES.unknownFault) return EXIT.failed;
      // A proxy from before faults answers 404 unknown-endpoint.
      return err.code === LOCAL_ERROR_CODES.unknownEndpoint ? EXIT.config : EXIT.failed;
    }
    return EXIT.ok;
  },
};

function armPlan(rest: string[], times: string | undefined): { rule: string; times?: number } {
  if (rest.length !== 1)
    throw new UsageError(
      'faults arm takes one rule, quoted: loopgate faults arm "429 times=1 retry-after=2" (see serve --help for the grammar).',
    );
  const rule = rest[0]!;
  const parsed = parseFaultRule(rule);
  if (!parsed.ok) throw new UsageError(parsed.problem);
  if (times !== undefined && (!/^\d{1,7}$/.test(times) || Number(times) < 1))
    throw new UsageError(`--times takes a whole number from 1 (got "${times.slice(0, 20)}").`);
  return times === undefined ? { rule } : { rule, times: Number(times) };
}

function clearPlan(rest: string[]): { id?: number } {
  if (rest.length > 1) throw new UsageError('faults clear takes at most one rule id.');
  const id = rest[0];
  if (id === undefined) return {};
  if (!/^#?\d{1,9}$/.test(id))
    throw new UsageError(
      `faults clear takes a rule's number, as \`loopgate faults\` shows it (#3 is 3), not "${id.slice(0, 20)}".`,
    );
  return { id: Number(id.replace('#', '')) };
}
