// `loopgate export`: the traffic log → a redacted HAR or JSONL file to share.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { defaultLogFile } from '../storage/config/dirs.js';
import { tokenFile } from '../storage/config/token-file.js';
import { exportTrafficLog, LogReadError, parseSince, type ExportFormat } from '../storage/log/index.js';
import { readTrafficLog, skippedText } from '../storage/log/reader.js';
import { secretsOfEnv } from '../rules/project/child-secrets.js';
import { otlpConfig } from '../rules/otlp/otlp-config.js';
import { EXIT, UsageError, type Command, type Io } from './command.js';
import { intOption } from './int-options.js';
import { DEFAULT_PORT } from '../core/options.js';

const usage = `Usage: loopgate export (--har OUT | --jsonl OUT | --otlp [URL]) [--port N | --log FILE] [--since DURATION|ISO] [--team]

Writes the traffic log (rotated files included) as a HAR 1.2 file (opens in
Chrome DevTools > Network > Import, and HTTP Toolkit) or as JSONL. Secrets are
redacted again on the way out; the file is written with mode 0600.

Options:
  --har OUT        write HAR 1.2 to OUT
  --jsonl OUT      write JSONL records to OUT (both may be given)
  --port N         the log of the proxy on port N (default ${DEFAULT_PORT}): each proxy keeps its own,
                   traffic-N.jsonl in Loopgate's state dir
  --log FILE       the traffic log to read, when it was set with serve --log
  --since WHEN     only requests since a duration ago (15m, 2h, 1d), a date (from local midnight) or an ISO time
  --team           also mask org/project ids, account headers, e-mail addresses
                   and home-directory paths (/home/NAME → ~) before sharing
  --otlp [URL]     send the log to an OpenTelemetry collector, one span per request
                   (GenAI semantic conventions), to URL or OTEL_EXPORTER_OTLP_ENDPOINT;
                   collector headers from OTEL_EXPORTER_OTLP_HEADERS
  --otlp-content   also send message content, where the log holds bodies (--log-bodies)

Exit codes: 0 written (or every span accepted), 1 a write failed or the collector
refused or dropped spans, 2 bad usage, 3 an unreadable log or a bad collector configuration.`;

// Secrets this process can know without the editor: the local token and the
// usual key variables (every key of a LOOPGATE_API_KEY list, not the list as
// one string). Records are already redacted; this only adds certainty.
function knownSecrets(env: NodeJS.ProcessEnv): string[] {
  const out = secretsOfEnv(env);
  if (env.LOOPGATE_TOKEN) out.push(env.LOOPGATE_TOKEN);
  try {
    const t = readFileSync(tokenFile(env), 'utf8').trim();
    if (t) out.push(t);
  } catch {
    // No token file yet: nothing to add.
  }
  return out;
}

/** `--otlp`: the log, one span per record, to a collector; exit 1 unless every span was accepted. */
async function exportToOtlp(
  io: Io,
  o: { log: string; since?: Date; team: boolean; secrets: string[]; endpoint?: string; content: boolean },
): Promise<number> {
  const cfg = otlpConfig(io.env, { endpoint: o.endpoint, content: o.content });
  if (!cfg.ok) {
    io.err(`loopgate export: ${cfg.problem}`);
    return EXIT.config;
  }
  if (!cfg.config)
    throw new UsageError('--otlp needs a collector: --otlp URL, or OTEL_EXPORTER_OTLP_ENDPOINT in the environment.');
  for (const note of cfg.notes) io.err(`note: ${note}`);
  let read;
  try {
    read = await readTrafficLog(o.log, { since: o.since, includeRotated: true });
  } catch (err) {
    if (err instanceof LogReadError) {
      io.err(`loopgate export: ${err.message}`);
      return EXIT.config;
    }
    throw err;
  }
  const records = read.records.sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
  // The SDK is loaded only for this.
  const { replayToOtlp } = await import('../proxy/otlp/export-log-spans.js');
  const r = await replayToOtlp({ records, config: cfg.config, team: o.team, secrets: o.secrets });
  const h = r.health;
  const skipped = skippedText(read, o.log);
  if (skipped) io.err(skipped);
  io.out(
    `Sent ${r.sent} ${r.sent === 1 ? 'span' : 'spans'} from ${read.files.length} log ${read.files.length === 1 ? 'file' : 'files'}${o.since ? ` since ${o.since.toISOString()}` : ''} to ${h.endpoint} (${h.protocol}, redacted${o.team ? ', team-masked' : ''}, content ${cfg.config.captureContent ? 'on' : 'off'}): ${h.exported} accepted, ${h.dropped} dropped.`,
  );
  if (h.dropped > 0 || h.exported < r.sent) {
    io.err(
      `loopgate export: the collector did not take every span${h.error ? ` (${h.error})` : ''}. Check the endpoint and its headers, then run the export again.`,
    );
    return EXIT.failed;
  }
  return EXIT.ok;
}

export const exportCommand: Command = {
  name: 'export',
  summary: 'Write the traffic log as a redacted HAR or JSONL file to share',
  usage,
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      // `--otlp` alone means "the endpoint from the environment".
      args: argv.map((a, i) =>
        a === '--otlp' && (argv[i + 1] === undefined || argv[i + 1]!.startsWith('-')) ? '--otlp=' : a,
      ),
      options: {
        har: { type: 'string' },
        jsonl: { type: 'string' },
        log: { type: 'string' },
        port: { type: 'string' },
        since: { type: 'string' },
        team: { type: 'boolean', default: false },
        otlp: { type: 'string' },
        'otlp-content': { type: 'boolean', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const targets: Array<[ExportFormat, string]> = [];
    if (values.har !== undefined) targets.push(['har', values.har]);
    if (values.jsonl !== undefined) targets.push(['jsonl', values.jsonl]);
    if (targets.length === 0 && values.otlp === undefined)
      throw new UsageError('say where to write: --har OUT, --jsonl OUT or --otlp [URL]');
    if (values['otlp-content'] && values.otlp === undefined) throw new UsageError('--otlp-content goes with --otlp');
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
        const skipped = skippedText(r, log);
        if (skipped) io.err(skipped);
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
    if (values.otlp !== undefined)
      return exportToOtlp(io, {
        log,
        since,
        team: values.team,
        secrets,
        endpoint: values.otlp || undefined,
        content: values['otlp-content'],
      });
    return EXIT.ok;
  },
};
