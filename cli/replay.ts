// `loopgate replay ID`: sends a request the proxy holds in memory again, through
// the proxy (which adds the key, records it, and marks it as a replay).
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command } from './command.js';
import {
  connectToProxy,
  CONNECTION_OPTIONS,
  CONNECTION_USAGE,
  localApiOf,
  type ProxyConnection,
} from './proxy-connection.js';
import { LocalApiError } from '../client/local-api-client.js';
import { LOCAL_ERROR_CODES, type TrafficDetail } from '../core/local-api.js';
import { replayRequest } from '../rules/replay/replay-request.js';
import { sendReplay } from '../client/send-replay.js';
import { tailLine } from '../presentation/render.js';
import { useColor } from './color.js';
import { requestFailed } from '../core/outcome.js';

/** How long the new request's record may take to appear (it is written when the answer closes). */
const RECORD_DEADLINE_MS = 5000;

export const replayCommand: Command = {
  name: 'replay',
  summary: 'Send a request of a running proxy again (or an edited body)',
  usage: `Usage: loopgate replay ID [--body FILE] [--proxy URL]

Sends the request ID (as \`loopgate tail\` prints it) again through the proxy:
the same method, path, headers and body, with the local token (the proxy adds
the real key): the upstream sees the original's header set, with a fresh
idempotency-key, traceparent id and x-stainless-retry-count 0, as a new request
has. The proxy records it like any request, marked as a replay of ID, and this
prints its line. A header or body in which a secret was masked is sent masked
(and said so). A body over 1 MiB, or one the proxy refused before reading it,
was never kept and cannot be replayed (send one with --body).

Options:
  --body FILE    Send this body instead (edit a request, then resend it).
${CONNECTION_USAGE}

Exit codes: 0 the replay was answered with a success, 1 it failed (its line says
why) or ID is not in the proxy's memory, 2 bad usage, 3 no Loopgate proxy with
this token answers, or it keeps no traffic.`,
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { ...CONNECTION_OPTIONS, body: { type: 'string' } },
    });
    if (positionals.length !== 1)
      throw new UsageError('give one request ID (loopgate tail prints them), e.g. loopgate replay 66382237');
    let body: string | undefined;
    if (values.body !== undefined) {
      try {
        body = await readFile(values.body, 'utf8');
      } catch (err) {
        io.err(
          `loopgate replay: cannot read ${values.body}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        );
        return EXIT.config;
      }
    }
    const conn = await connectToProxy('replay', values, io);
    if (typeof conn === 'number') return conn;
    let entry: TrafficDetail;
    try {
      entry = await localApiOf(conn).entry(positionals[0]!);
    } catch (err) {
      if (!(err instanceof LocalApiError)) throw err;
      io.err(`loopgate replay: ${err.message}`);
      return err.code === LOCAL_ERROR_CODES.captureOff ? EXIT.config : EXIT.failed;
    }
    const plan = replayRequest(entry, body ?? entry.requestBody);
    if (!plan.ok) {
      io.err(`loopgate replay: request ${positionals[0]} cannot be sent again: ${plan.reason}`);
      return EXIT.failed;
    }
    for (const note of plan.request.notes) io.err(`note: ${note}`);
    const { id } = await sendReplay(conn.url, conn.credential, plan.request);
    const record = await newRecord(conn, id);
    if (!record) {
      io.err(`loopgate replay: sent as ${id}, but its record did not appear within ${RECORD_DEADLINE_MS / 1000} s.`);
      return EXIT.failed;
    }
    io.out(tailLine(record.record, { color: useColor(io) }));
    // The exit code says what `tail --errors` and the status bar say (replay reads the whole answer, so it never left early).
    return requestFailed(record.record) ? EXIT.failed : EXIT.ok;
  },
};

/** Polls the ring for the new request's record, with a deadline. */
async function newRecord(conn: ProxyConnection, id: string): Promise<TrafficDetail | undefined> {
  const deadline = Date.now() + RECORD_DEADLINE_MS;
  for (let wait = 10; Date.now() < deadline; wait = Math.min(wait * 2, 200)) {
    try {
      return await localApiOf(conn).entry(id);
    } catch (err) {
      if (!(err instanceof LocalApiError) || err.status !== 404) throw err;
    }
    await new Promise((r) => setTimeout(r, wait));
  }
  return undefined;
}
