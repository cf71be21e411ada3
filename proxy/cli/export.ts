// `loopgate export`: the traffic log → a redacted HAR or JSONL file to share.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { defaultLogFile } from '../config/dirs.js';
import { tokenFile } from '../config/token.js';
import { exportTrafficLog, LogReadError, parseSince, type ExportFormat } from '../log/index.js';
import { EXIT, UsageError, type Command } from './command.js';
import { intOption } from './serve.js';
import { DEFAULT_PORT } from '../pipeline/options.js';

const usage = `Usage: loopgate export (--har OUT | --jsonl OUT) [--port N | --log FILE] [--since DURATION|ISO] [--team]

Writes the traffic log (rotated files included) as a HAR 1.2 file (opens in
Chrome DevTools > Network > Import, and HTTP Toolkit) or as JSONL. Secrets are
redacted again on the way out; the file is written with mode 0600.

Options:
  --har OUT        write HAR 1.2 to OUT
  --jsonl OUT      write JSONL records to OUT (both may be given)
  --port N         the log of the proxy on port N (default ${DEFAULT_PORT}): each proxy keeps its own,
                   traffic-N.jsonl in Loopgate's state dir
  --log FILE       the traffic log to read, when it was set with serve --log
  --since WHEN     only requests since a duration ago (15m, 2h, 1d) or an ISO time
  --team           also mask org/project ids, account headers, e-mail addresses
                   and home-directory paths (/home/NAME → ~) before sharing`;

// Secrets this process can know without the editor: the local token and the
// usual key variables. Records are already redacted; this only adds certainty.
function knownSecrets(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const name of ['LOOPGATE_TOKEN', 'LOOPGATE_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN']) {
    const v = env[name];
    if (v) out.push(v);
  }
  try {
    const t = readFileSync(tokenFile(env), 'utf8').trim();
    if (t) out.push(t);
  } catch {
    // No token file yet: nothing to add.
  }
  return out;
}

export const exportCommand: Command = {
  name: 'export',
  summary: 'Write the traffic log as a redacted HAR or JSONL file to share',
  usage,
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      options: {
        har: { type: 'string' },
        jsonl: { type: 'string' },
        log: { type: 'string' },
        port: { type: 'string' },
        since: { type: 'string' },
        team: { type: 'boolean', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const targets: Array<[ExportFormat, string]> = [];
    if (values.har !== undefined) targets.push(['har', values.har]);
    if (values.jsonl !== undefined) targets.push(['jsonl', values.jsonl]);
    if (targets.length === 0) throw new UsageError('say where to write: --har OUT or --jsonl OUT');
    for (const [flag, out] of targets) if (!out.trim()) throw new UsageError(`--${flag} needs a file name`);
    let since: Date | undefined;
    if (values.since !== undefined) {
      try {
        since = parseSince(values.since);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
    }
    if (values.log !== undefined && values.port !== undefined) throw new UsageError('give --port or --log, not both');
    const log = values.log ?? defaultLogFile(io.env, intOption('port', values.port, 1, 65535) ?? DEFAULT_PORT);
    const secrets = knownSecrets(io.env);

    for (const [format, out] of targets) {
      try {
        const r = await exportTrafficLog({ log, out, format, since, team: values.team, secrets });
        const what = format === 'har' ? 'HAR 1.2' : 'JSONL';
        io.out(
          `Wrote ${r.entries} ${r.entries === 1 ? 'request' : 'requests'} to ${out} (${what}, redacted${values.team ? ', team-masked' : ''}, mode 0600)` +
            ` from ${r.files.length} log ${r.files.length === 1 ? 'file' : 'files'}${since ? ` since ${since.toISOString()}` : ''}.`,
        );
        if (r.skipped > 0) io.err(`Skipped ${r.skipped} corrupt or truncated ${r.skipped === 1 ? 'line' : 'lines'} in ${log}.`);
      } catch (err) {
        if (err instanceof LogReadError) {
          io.err(`loopgate export: ${err.message}`);
          return EXIT.config;
        }
        io.err(`loopgate export: cannot write ${out}: ${(err as Error).message}`);
        // A path that cannot be written to is the caller's to fix (exit 3); a failed write, 1.
        return (err as NodeJS.ErrnoException).code === 'ENOENT' ? EXIT.config : EXIT.failed;
      }
    }
    return EXIT.ok;
  },
};
