// `loopgate export --otlp`: an existing traffic log sent to a collector, one
// span per record, for a team that starts collecting after the fact. The
// records pass the export's last redaction (and --team masks) first; the spans
// are the live proxy's (rules/otlp/genai-span.ts), less what only the live exchange
// knew (the upstream's address, the caller's trace). Sent in slices, each
// flushed before the next, so a long log never overflows the bounded queue.
import { sanitizeRecords } from '../../storage/log/sanitize.js';
import type { TrafficRecord } from '../../core/record.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import type { OtlpConfig } from '../../core/otlp-options.js';
import { answerProtocol, contentFor, scrubFacts, spanRecord, type SpanFacts } from '../../rules/otlp/genai-span.js';
import { REQUEST_VALUE_KEYS, responseFacts } from '../../rules/otlp/genai-facts.js';
import { openOtlpSink } from './exporter.js';
import type { OtlpHealth } from '../../core/health.js';
import { version } from '../../core/version.js';

export interface ReplayOptions {
  records: TrafficRecord[];
  config: OtlpConfig;
  team?: boolean;
  /** Exact secrets to scrub as well (the local token, keys in the environment, the collector's header values). */
  secrets?: string[];
  workerFile?: string;
}

export interface ReplayResult {
  sent: number;
  health: OtlpHealth;
}

/** Spans go out in slices this big, each flushed before the next (well under the queue's bound). */
const SLICE = 256;

function parsedValues(body: string | undefined): Record<string, unknown> | undefined {
  if (!body) return undefined;
  try {
    const v = JSON.parse(body) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    // Only the parameters the conventions name; the rest of the body stays here.
    const picked: Record<string, unknown> = {};
    for (const k of REQUEST_VALUE_KEYS) if (k in v) picked[k] = (v as Record<string, unknown>)[k];
    return picked;
  } catch {
    return undefined;
  }
}

export async function replayToOtlp(opts: ReplayOptions): Promise<ReplayResult> {
  const secrets = [...(opts.secrets ?? []), ...Object.values(opts.config.headers)];
  const redactor = createRedactor({ secrets });
  const records = sanitizeRecords(opts.records, { team: opts.team, secrets });
  const sink = openOtlpSink(opts.config, { version, redact: (s) => redactor.string(s), workerFile: opts.workerFile });
  let sent = 0;
  try {
    for (let i = 0; i < records.length; i += SLICE) {
      for (const full of records.slice(i, i + SLICE)) {
        const rec = spanRecord(full);
        const facts: SpanFacts =
          rec.status > 0 && rec.status < 400 && full.responseBody
            ? responseFacts(full.responseBody, answerProtocol(rec))
            : {};
        facts.requestValues = parsedValues(full.requestBody);
        if (opts.config.captureContent)
          facts.content = contentFor(rec, { requestBody: full.requestBody, responseBody: full.responseBody });
        sink.record(rec, scrubFacts(facts, redactor));
        sent++;
      }
      await sink.flush();
    }
  } finally {
    await sink.close();
  }
  return { sent, health: sink.health };
}
