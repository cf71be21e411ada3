// The contract between an extension-host test entry and the Node-side harness:
// the entry writes one JSON file, the harness polls for it. Pure: no I/O here.

/** The extension host inherits code-server's environment: this names the results file. */
export const RESULTS_ENV = 'LOOPGATE_E2E_RESULTS';
/**
 * When set, `run()` does not return after writing results until this file
 * exists: VS Code ends the extension host when `run()` returns, and the
 * harness's UI checks (afterResults) need the extension still alive.
 */
export const RELEASE_ENV = 'LOOPGATE_E2E_RELEASE';

/**
 * An editor session (one extension host running many suites) names its folder
 * here. The harness writes `request-<n>.json` (a SuiteRequest) there; the host
 * answers with `results-<n>.json` and, when the request holds it, waits for
 * `release-<n>` before reading the next request.
 */
export const SESSION_ENV = 'LOOPGATE_E2E_SESSION';

export type SuiteRequest =
  | {
      /** A suite of the session entry: its path under test/e2e without `.ext.ts`, e.g. `traffic/traffic`. */
      suite: string;
      /** `loopgate.*` user settings for this suite; every other `loopgate.*` user setting is reset. */
      settings: Record<string, unknown>;
      /**
       * Other editor settings a suite needs (e.g. `chat.disableAIFeatures`): each one any suite of the session
       * set is sent every time, with the session's default when this suite does not set it.
       */
      editorSettings: Record<string, unknown>;
      /** Keep the host in this suite's state until `release-<n>` exists (the harness's UI checks). */
      hold: boolean;
    }
  | { end: true };

export const sessionFile = (kind: 'request' | 'results' | 'release', n: number): string =>
  kind === 'request' ? `request-${n}.json` : kind === 'results' ? `results-${n}.json` : `release-${n}`;

export interface ExtTestResult {
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  /** Failure message and stack, or the reason for a skip. */
  error?: string;
}

export interface ExtResultsFile {
  /** Written last, so a reader never mistakes a partial file for a finished run. */
  done: true;
  vscodeVersion: string;
  results: ExtTestResult[];
}

/** Parses a results file; throws with a message saying what is wrong. */
export function parseResultsFile(text: string): ExtResultsFile {
  const data: unknown = JSON.parse(text);
  if (typeof data !== 'object' || data === null) throw new Error('results file is not a JSON object');
  const file = data as Partial<ExtResultsFile>;
  if (file.done !== true) throw new Error('results file has no "done": true');
  if (!Array.isArray(file.results)) throw new Error('results file has no "results" array');
  for (const r of file.results) {
    if (typeof r?.name !== 'string' || !['passed', 'failed', 'skipped'].includes(r?.status)) {
      throw new Error(`malformed result entry: ${JSON.stringify(r)}`);
    }
  }
  return file as ExtResultsFile;
}
