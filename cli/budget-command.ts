// `loopgate budget`: every cap of a running proxy (session, key per day and
// month, `loopgate run --budget`), what each has spent and what is left;
// `budget reset SESSION` sets a session's spend back to nothing.
import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command } from './command.js';
import { connectToProxy, CONNECTION_OPTIONS, CONNECTION_USAGE, localApiOf } from './proxy-connection.js';
import { cliInvocation } from './invocation.js';
import { LocalApiError } from '../client/local-api-client.js';
import { LOCAL_ERROR_CODES } from '../core/local-api.js';
import { budgetText } from '../presentation/budget-text.js';

export const budgetCommand: Command = {
  name: 'budget',
  summary: 'Show every budget cap of a running proxy, what it has spent and what is left; reset a session',
  usage: `Usage: loopgate budget [--json] [--proxy URL]
       loopgate budget reset SESSION [--proxy URL]

Without a subcommand: the caps in force (serve --budget-*, loopgate.json
"budgets", the editor's loopgate.budgets setting) and one line per session,
run and key that has spent under one: spent (estimated USD and tokens), the
cap, what is left, and WARNING at 80 % or REACHED. See docs/budgets.md.

  reset SESSION  Set the session's spend back to nothing (its id as
                 \`loopgate sessions\` or \`loopgate budget\` shows it): its
                 next request goes upstream again.

Options:
  --json         The proxy's answer as one JSON object: {caps, lines: [{scope,
                 subject, period, cap, spent, left, state}]}.
${CONNECTION_USAGE}

Exit codes: 0 done, 1 no such session to reset, 2 bad usage, 3 no Loopgate
proxy with this token answers.`,
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { ...CONNECTION_OPTIONS, json: { type: 'boolean' } },
    });
    const [sub, ...rest] = positionals;
    if (sub !== undefined && sub !== 'reset')
      throw new UsageError(`unknown subcommand "${sub.slice(0, 40)}": use \`budget\` or \`budget reset SESSION\`.`);
    if (sub === 'reset' && rest.length !== 1)
      throw new UsageError('budget reset takes one session id, as `loopgate budget` shows it.');
    const conn = await connectToProxy('budget', values, io);
    if (typeof conn === 'number') return conn;
    const api = localApiOf(conn);
    try {
      if (sub === 'reset') {
        const answer = await api.resetBudget(rest[0]!);
        io.out(
          values.json
            ? JSON.stringify(answer)
            : `Budget of session ${answer.session} reset: it spends from $0.00 again.`,
        );
      } else {
        const answer = await api.budget();
        if (values.json) io.out(JSON.stringify(answer));
        else for (const line of budgetText(answer, cliInvocation(io.env).command)) io.out(line);
      }
    } catch (err) {
      if (!(err instanceof LocalApiError)) throw err;
      io.err(`loopgate budget: ${err.message}`);
      if (err.code === LOCAL_ERROR_CODES.unknownSession) return EXIT.failed;
      // A proxy from before budgets answers 404 unknown-endpoint.
      return err.code === LOCAL_ERROR_CODES.unknownEndpoint ? EXIT.config : EXIT.failed;
    }
    return EXIT.ok;
  },
};
