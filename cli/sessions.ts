// `loopgate sessions`: the agent sessions a running proxy holds in memory, one
// row (or one JSON line) each: client, id, turns, tokens, estimated cost, cache
// hit ratio, errors and the last rate-limit headroom seen.
import { parseArgs } from 'node:util';
import { EXIT, tableWidth, type Command } from './command.js';
import { connectToProxy, CONNECTION_OPTIONS, CONNECTION_USAGE, localApiOf } from './proxy-connection.js';
import { LocalApiError } from '../client/local-api-client.js';
import { LOCAL_ERROR_CODES } from '../core/local-api.js';
import { sessionJson, sessionsTable } from '../presentation/session-text.js';

export const sessionsCommand: Command = {
  name: 'sessions',
  summary: 'List the agent sessions of a running proxy: tokens, estimated cost, cache hits',
  usage: `Usage: loopgate sessions [--json] [--proxy URL]

Prints the sessions the proxy holds in memory, most recent first: the client,
the session id (its unique start, for \`loopgate tail --session ID\`), turns,
tokens (input, output, cache read and write), the estimated cost ("no price"
for a model without one, "≥" for a floor), the cache hit ratio, errors, and the
rate-limit headroom the upstream last reported; then the total, and which
price each model was estimated with where it is not its own. The table fits
the terminal ($COLUMNS, else 100 columns in a pipe), leaving columns out to
fit. For history across restarts: \`loopgate usage\`.

Options:
  --json         One JSON object a line: id, client, requests, turns, tokens
                 {input, output, cacheRead, cacheWrite, ...}, cost {estimated,
                 currency, unpriced} or null with costNote, pricedAs
                 [{model, pricedAs, match}], floors, cacheHitRatio, ...
${CONNECTION_USAGE}

Exit codes: 0 listed, 2 bad usage, 3 no Loopgate proxy with this token answers,
or it keeps no traffic (--no-capture).`,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { ...CONNECTION_OPTIONS, json: { type: 'boolean' } },
    });
    const conn = await connectToProxy('sessions', values, io);
    if (typeof conn === 'number') return conn;
    let answer;
    try {
      answer = await localApiOf(conn).sessions();
    } catch (err) {
      if (!(err instanceof LocalApiError)) throw err;
      io.err(`loopgate sessions: ${err.message}`);
      return err.code === LOCAL_ERROR_CODES.captureOff || err.status === 404 ? EXIT.config : EXIT.failed;
    }
    if (values.json) for (const s of answer.sessions) io.out(sessionJson(s));
    else io.out(sessionsTable(answer.sessions, tableWidth(io)));
    return EXIT.ok;
  },
};
