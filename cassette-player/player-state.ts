// What the player's HTTP and WebSocket answers share: the cassette, the misses, and the options they read.
import type { MatchOptions } from '../rules/cassettes/cassette-match.js';
import type { Misses } from './miss-message.js';
import type { Recordings } from './recordings.js';

/** --on-miss record|simulate: where misses (and /models calls) go instead of being refused (PlayerOptions). */
export interface PassMisses {
  siteUrl: string;
  prefix: string;
  addRecordedModels?: (id: string) => boolean;
}

export interface PlayerState {
  recordings: Recordings;
  misses: Misses;
  /** --on-miss record: the keys whose miss was passed on, each taken once by the recorder. */
  passed: Set<string>;
  speed: number;
  match: MatchOptions | undefined;
  redact: ((text: string) => string) | undefined;
  passMisses: PassMisses | undefined;
}

/** The path as recorded: the upstream's path prefix (`/api` of https://host/api), which the proxy adds, taken off. */
export function recordedPath(state: Pick<PlayerState, 'passMisses'>, sentPath: string): string {
  const prefix = state.passMisses?.prefix ?? '';
  return prefix && sentPath.startsWith(prefix) ? sentPath.slice(prefix.length) || '/' : sentPath;
}
