// `loopgate usage`: tokens, estimated cost and cache hit ratio per day,
// session, model or key, from the traffic log on disk (rotated files
// included), so it reports every client's history across restarts.
import { parseArgs } from 'node:util';
import { defaultLogFile } from '../storage/config/dirs.js';
import { DEFAULT_PORT } from '../core/options.js';
import { LogReadError, parseSince } from '../storage/log/index.js';
import { readTrafficLog, skippedText } from '../storage/log/reader.js';
import { USAGE_GROUPINGS, usageTotals, type UsageGrouping } from '../storage/log/usage-totals.js';
import { usageJson, usageTable } from '../presentation/session-text.js';
import { EXIT, tableWidth, UsageError, type Command } from './command.js';
import { intOption } from './int-options.js';

const DEFAULT_SINCE = '7d';

export const usageCommand: Command = {
  name: 'usage',
  summary: 'Tokens, estimated cost and cache hits per day, session, model or key, from the log',
  usage: `Usage: loopgate usage [--since 7d] [--by day|session|model|key] [--json] [--port N | --log FILE]

Reads the traffic log on disk (rotated files included), which keeps each
request's session, tokens and estimated cost but never its content, so it
reports every client's history across restarts of the proxy. Per group:
requests, tokens (input, output, cache read and write), estimated cost (and how
many requests had no price), cache hit ratio and errors, then the total.

Options:
  --since WHEN   Only requests since a duration ago (15m, 2h, 7d, 2w), a date
                 (2026-12-01 or 20261201: from local midnight, the local date
                 --by day shows) or an ISO time (default ${DEFAULT_SINCE}).
  --by WHAT      day (local date, the default), session, model (the one that
                 answered, with the one asked for beside it) or key (name).
  --json         One JSON object a line: each group, then the total ("total": true).
  --port N       The log of the proxy on port N (default ${DEFAULT_PORT}): each proxy keeps its own.
  --log FILE     The traffic log to read, when it was set with serve --log.

Costs are estimated from list prices (docs/cost.md), never a bill; a model
without a price is counted as "no price", never $0.00; the table says which
price each model was estimated with where it is not its own. It fits the
terminal ($COLUMNS, else 100 columns in a pipe), leaving columns out to fit.
Exit codes: 0 done, 2 bad usage, 3 an unreadable log.`,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        since: { type: 'string' },
        by: { type: 'string' },
        json: { type: 'boolean' },
        port: { type: 'string' },
        log: { type: 'string' },
      },
    });
    const by = (values.by ?? 'day') as UsageGrouping;
    if (!USAGE_GROUPINGS.includes(by))
      throw new UsageError(`--by takes ${USAGE_GROUPINGS.join(', ')} (got "${String(values.by).slice(0, 40)}").`);
    let since: Date;
    try {
      since = parseSince(values.since ?? DEFAULT_SINCE);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (values.log !== undefined && values.port !== undefined) throw new UsageError('give --port or --log, not both.');
    const log = values.log ?? defaultLogFile(io.env, intOption('port', values.port, 1, 65535) ?? DEFAULT_PORT);
    let read;
    try {
      read = await readTrafficLog(log, { since, includeRotated: true });
    } catch (err) {
      if (err instanceof LogReadError) {
        io.err(`loopgate usage: ${err.message}`);
        return EXIT.config;
      }
      throw err;
    }
    const records = read.records.sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
    const totals = usageTotals(records, by);
    if (values.json) for (const line of usageJson(totals)) io.out(line);
    else
      io.out(
        usageTable(
          totals,
          `${log}${read.files.length > 1 ? ` and ${read.files.length - 1} rotated` : ''} since ${since.toISOString()}`,
          tableWidth(io),
        ),
      );
    const skipped = skippedText(read, log);
    if (skipped) io.err(skipped);
    return EXIT.ok;
  },
};
