// A request the cassette has no recording for (issue 34 §1): counted, reported, and told in words that say what
// differs from the nearest recording.
import { CASSETTE_MISS_CODE } from '../core/cassette.js';
import { nearestRecording, type Difference, type MatchOptions } from '../rules/cassettes/cassette-match.js';
import { WS_METHOD, type Sent } from './recordings.js';

/** A miss's status: a client error no client retries, and not one the proxy reads as "route lacks the protocol". */
export const MISS_STATUS = 400;

export interface CassetteMiss {
  method: string;
  path: string;
  /** The client that sent it (rules/sessions/session-identity.ts: its User-Agent, else its body), when known. */
  client?: string;
  /**
   * The nearest recording's request path and the first differences, when one has the same method and path; the
   * same client's recording when there is one (`sameClient`).
   */
  nearest?: { path: string; differences: Difference[]; sameClient: boolean };
}

/** Counts and reports the misses of one player. */
export class Misses {
  count = 0;

  constructor(
    private readonly requests: readonly Sent[],
    private readonly match: MatchOptions | undefined,
    private readonly onMiss: ((miss: CassetteMiss) => void) | undefined,
  ) {}

  /** Counts and reports a miss; its message and first differing path. */
  missed(sent: Sent): { message: string; param: string | null } {
    this.count++;
    const near = nearestRecording(sent, this.requests, this.match);
    const report: CassetteMiss = { method: sent.method, path: sent.path };
    if (sent.client) report.client = sent.client;
    if (near)
      report.nearest = {
        path: near.recording.path,
        differences: near.differences,
        sameClient: sent.client !== undefined && near.recording.client === sent.client,
      };
    this.onMiss?.(report);
    return { message: missMessage(report), param: report.nearest?.differences[0]?.path || null };
  }
}

/** What a miss says: the request, and where it differs from the nearest recording (or that none is near). */
export function missMessage(m: CassetteMiss): string {
  const what =
    m.method === WS_METHOD
      ? `a response.create on the WebSocket ${m.path.split('?')[0]}`
      : `${m.method} ${m.path.split('?')[0]}`;
  const head = `Loopgate replay: no recording matches ${what} (${CASSETTE_MISS_CODE}); nothing was sent upstream.`;
  if (!m.nearest)
    return `${head} The cassette has nothing for ${what}. Record it with \`loopgate serve --record DIR\`.`;
  const lines = m.nearest.differences.map((d) => `  ${d.path || '(body)'}: recorded ${d.recorded}, sent ${d.sent}`);
  const whose = m.nearest.sameClient ? ` of ${m.client}` : m.client ? ` (none from ${m.client}: another client's)` : '';
  return `${head} The nearest recording${whose} differs at:\n${lines.join('\n')}\nRecord again, or add the path to the match's ignore list if it varies between runs.`;
}
