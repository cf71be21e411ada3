// `loopgate tail`: one line per request from a running proxy, as it happens.
import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command } from './command.js';
import { connectToProxy, CONNECTION_OPTIONS, CONNECTION_USAGE, localApiOf } from './proxy-connection.js';
import { LocalApiError } from '../client/local-api-client.js';
import type { TrafficSummary } from '../core/local-api.js';
import { matches, tailLine, validStatusFilter, type TailFilter } from '../presentation/render.js';
import { useColor } from './color.js';
import { intOption } from './int-options.js';
import { outputGone } from './signals.js';
import { sessionNamed } from './session-id.js';

export const tailCommand: Command = {
  name: 'tail',
  summary: 'Follow the requests of a running proxy, one line each',
  usage: `Usage: loopgate tail [--json] [--errors] [--session ID] [--model ID] [--key NAME] [--status CODE] [--lines N] [--no-follow] [--proxy URL]

Prints the proxy's recent requests (the last 10), then each new one as it
finishes, until Ctrl+C: time, request id (for show/replay), method, path as sent
(* when Loopgate rewrote it), status, model, key and route, time to first byte
and total, tokens in/out, and the diagnosis. Everything is redacted; the proxy
keeps recent requests in memory only (serve --no-capture turns that off).

Options:
  --json         One JSON record a line (the traffic log's format).
  --errors       Only failed requests (status 0 or >= 400, or a stream that broke).
  --session ID   Only this agent session's requests (\`loopgate sessions\` lists them).
  --model ID     Only requests for this model.
  --key NAME     Only requests routed to this key.
  --status CODE  Only this status (401) or class (4xx).
  --lines N      Recent requests to print first (default 10; 0 for none).
  --no-follow    Print the recent requests and exit.
${CONNECTION_USAGE}

Colour only on a terminal, and never with NO_COLOR set.
Exit codes: 0 done (Ctrl+C, or the proxy stopped), 1 no such session in the
proxy's memory, 2 bad usage, 3 no Loopgate proxy with this token answers, or it
keeps no traffic (--no-capture).`,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        ...CONNECTION_OPTIONS,
        json: { type: 'boolean' },
        errors: { type: 'boolean' },
        session: { type: 'string' },
        model: { type: 'string' },
        key: { type: 'string' },
        status: { type: 'string' },
        lines: { type: 'string' },
        'no-follow': { type: 'boolean' },
      },
    });
    if (values.status !== undefined && !validStatusFilter(values.status))
      throw new UsageError(`--status takes a code (401) or a class (4xx) (got "${values.status.slice(0, 20)}").`);
    const lines = intOption('lines', values.lines, 0, 500) ?? 10;
    const filter: TailFilter = { errors: values.errors, model: values.model, key: values.key, status: values.status };
    const conn = await connectToProxy('tail', values, io);
    if (typeof conn === 'number') return conn;
    const style = { color: !values.json && useColor(io) };
    let session: string | undefined;
    const wanted = (e: TrafficSummary) =>
      matches(e.record, filter) && (session === undefined || e.record.session?.id === session);
    const print = (e: TrafficSummary) => {
      if (wanted(e)) io.out(values.json ? JSON.stringify(e.record) : tailLine(e.record, style));
    };
    let last = 0;
    try {
      const api = localApiOf(conn);
      if (values.session !== undefined) {
        const found = await sessionNamed(api, values.session);
        if (!found.ok) {
          io.err(`loopgate tail: ${found.problem}`);
          return EXIT.failed;
        }
        session = found.id;
      }
      const recent = await api.traffic();
      last = recent.entries[0]?.seq ?? 0;
      // The last N that pass the filter, oldest first.
      for (const e of recent.entries.filter(wanted).slice(0, lines).reverse()) print(e);
      if (values['no-follow']) return EXIT.ok;
      // Until Ctrl+C, the proxy stops, or the reader of the lines goes away (`| head`).
      await api.live(last, print, { signal: outputGone });
    } catch (err) {
      if (err instanceof LocalApiError) {
        io.err(`loopgate tail: ${err.message}`);
        return EXIT.config;
      }
      if (outputGone.aborted) return EXIT.ok;
      const code = (err as NodeJS.ErrnoException).code;
      // The proxy went away mid-feed: that ends the tail, like `kubectl logs -f` when its pod ends.
      if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') {
        io.err('loopgate tail: the proxy stopped.');
        return EXIT.ok;
      }
      throw err;
    }
    io.err('loopgate tail: the proxy stopped.');
    return EXIT.ok;
  },
};
