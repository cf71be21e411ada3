// `loopgate show ID`: one request from a running proxy's traffic ring, whole.
import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command } from './command.js';
import { connectToProxy, CONNECTION_OPTIONS, CONNECTION_USAGE, localApiOf } from './proxy-connection.js';
import { LocalApiError } from '../client/local-api-client.js';
import { LOCAL_ERROR_CODES } from '../core/local-api.js';
import { showText } from '../presentation/show-text.js';
import { replayRequest, curlCommand } from '../rules/replay/replay-request.js';
import { useColor } from './color.js';
import { cliInvocation } from './invocation.js';
import { saveEntry } from '../storage/cassettes/save-entry.js';

export const showCommand: Command = {
  name: 'show',
  summary: 'Show one request of a running proxy: overview, conversation, wire',
  usage: `Usage: loopgate show ID [--wire] [--full] [--json] [--curl] [--save DIR] [--proxy URL]

Prints one request the proxy still holds in memory (ID as \`loopgate tail\`
prints it, 8 characters or more, or the whole x-loopgate-request-id):
  overview      status, model (an alias as "asked for X, served as Y"), key
                and route, rewrites, diagnosis, timings (Server-Timing up to
                the head; the time split head to end: Loopgate's own work and
                waiting on the upstream), rate-limit headers, token usage
                (cache and reasoning included)
  session       the agent session it belongs to: client, turns, tokens,
                estimated cost, cache hit ratio, rate-limit headroom
  cache         this turn's prompt-cache outcome and, for a miss, why (the
                first region that changed since the previous turn, a TTL lapse)
  context       what fills the context, in tokens: system, tools (per MCP
                server), history, tool results, the new turn
  conversation  the messages sent and the answer reassembled from the stream,
                tool calls with their arguments and, when a later request sent
                it back, their result
Everything is redacted as in the traffic log.

Options:
  --wire         Also the headers, the bodies pretty-printed, and each stream
                 event with the time it arrived. A bridged request shows both
                 sides, each headed: what the client sent and received (its
                 protocol), the translation sent upstream and what the
                 upstream sent back (Chat Completions).
  --full         The system prompt whole: one over 2 KB is otherwise folded to
                 its first lines and how many characters more there are.
  --json         The entry as JSON (record, bodies, event times, and session,
                 cache and context: null where the proxy has none).
  --curl         A curl command that sends this request again through the proxy
                 (the local token comes from \`loopgate token\`; never the key).
  --save DIR     Add this exchange to the cassette in DIR (a file after the ones
                 there), for \`loopgate serve --replay DIR\`; says the file.
${CONNECTION_USAGE}

Exit codes: 0 shown, 1 no such request in the proxy's memory, 2 bad usage,
3 no Loopgate proxy with this token answers, or it keeps no traffic.`,
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        ...CONNECTION_OPTIONS,
        wire: { type: 'boolean' },
        full: { type: 'boolean' },
        json: { type: 'boolean' },
        curl: { type: 'boolean' },
        save: { type: 'string' },
      },
    });
    if (positionals.length !== 1)
      throw new UsageError('give one request ID (loopgate tail prints them), e.g. loopgate show 66382237');
    if (values.save !== undefined && (values.json || values.curl || values.wire))
      throw new UsageError('--save writes the exchange into a cassette: leave out --json, --curl and --wire.');
    const conn = await connectToProxy('show', values, io);
    if (typeof conn === 'number') return conn;
    let entry;
    try {
      entry = await localApiOf(conn).entry(positionals[0]!);
    } catch (err) {
      if (!(err instanceof LocalApiError)) throw err;
      io.err(`loopgate show: ${err.message}`);
      return err.code === LOCAL_ERROR_CODES.captureOff ? EXIT.config : EXIT.failed;
    }
    if (values.save !== undefined) {
      const saved = saveEntry(values.save, entry);
      if ('problem' in saved) {
        io.err(`loopgate show: this request cannot be saved into a cassette: ${saved.problem}.`);
        return EXIT.failed;
      }
      io.out(`saved ${saved.file}`);
    } else if (values.json)
      io.out(
        JSON.stringify(
          { ...entry, session: entry.session ?? null, cache: entry.cache ?? null, context: entry.context ?? null },
          null,
          2,
        ),
      );
    else if (values.curl) {
      const plan = replayRequest(entry);
      if (!plan.ok) {
        io.err(`loopgate show: this request cannot be sent again: ${plan.reason}`);
        return EXIT.failed;
      }
      for (const note of plan.request.notes) io.err(`note: ${note}`);
      io.out(curlCommand(plan.request, conn.url, { command: cliInvocation(io.env).command }));
    } else io.out(showText(entry, { wire: values.wire ?? false, full: values.full ?? false, color: useColor(io) }));
    return EXIT.ok;
  },
};
