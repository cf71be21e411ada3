// One request from the traffic ring saved into a cassette: `loopgate show ID
// --save DIR` and the Traffic view's Save as Fixture. The entry is what the
// ring kept (already redacted), converted as `serve --record` converts it
// (rules/cassettes/cassette-exchange.ts), and written after what DIR already holds, so
// saving into a cassette never overwrites one of its files. A folder a link
// carries out of itself is refused (safe-folder.ts).
import type { TrafficEntry } from '../../core/traffic-entry.js';
import type { MatchOptions } from '../../rules/cassettes/cassette-match.js';
import { exchangeOf } from '../../rules/cassettes/cassette-exchange.js';
import { nextExchangeNumber, writeExchange } from './store.js';
import { FolderRefused } from './safe-folder.js';

/** The file written, or why this request cannot be a cassette exchange. */
export function saveEntry(
  dir: string,
  entry: TrafficEntry,
  match: MatchOptions = {},
  now = new Date(),
): { file: string } | { problem: string } {
  const x = exchangeOf(entry.record, entry, match, now);
  if ('skip' in x) return { problem: x.skip };
  try {
    return { file: writeExchange(dir, nextExchangeNumber(dir), x) };
  } catch (err) {
    // The caller ends the sentence.
    if (err instanceof FolderRefused) return { problem: err.message.replace(/\.$/, '') };
    const code = (err as NodeJS.ErrnoException).code;
    return { problem: `${dir} cannot be written (${code ?? (err as Error).message})` };
  }
}
