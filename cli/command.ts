// The shape every CLI command module exports. cli/main.ts only dispatches.
import type { TerminalText } from '../rules/terminal/terminal-text.js';

/**
 * A line to print. A plain string is escaped on its way out (cli/terminal-io.ts), so outside text in
 * it cannot act on the terminal; a TerminalText (rules/terminal/terminal-text.ts) is printed as it is, colour included.
 */
export type Line = string | TerminalText;

export interface Io {
  out(line: Line): void;
  err(line: Line): void;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream;
  /** Standard output is a terminal (colour is allowed). */
  isTTY?: boolean;
  /** The terminal's width in columns, when standard output is one. */
  columns?: number;
  /** Where a project file (loopgate.json) is read from; the process's working directory when unset. */
  cwd?: string;
  /** Ends a long-running command (serve, simulate) when it aborts; the process itself ends one on SIGINT or SIGTERM. */
  stop?: AbortSignal;
}

/** The width tables fit: $COLUMNS when set, else the terminal's, else 100 (a pipe, a file). */
export function tableWidth(io: Io): number {
  const env = Number(io.env.COLUMNS);
  if (Number.isInteger(env) && env >= 20 && env <= 1000) return env;
  return io.columns !== undefined && io.columns >= 20 ? io.columns : 100;
}

export interface Command {
  name: string;
  summary: string;
  /** Full --help text. */
  usage: string;
  /** Resolves to the process exit code (see EXIT). Long-running commands resolve when they stop. */
  run(argv: string[], io: Io): Promise<number>;
}

/** Documented exit codes (README "Exit codes"). */
export const EXIT = {
  ok: 0,
  /** A check failed (doctor), or the upstream answered with an error (models). */
  failed: 1,
  /** Bad command line. */
  usage: 2,
  /** Bad configuration: upstream URL, missing key, unreadable file. */
  config: 3,
  /** Could not start: port in use, permission denied. */
  startup: 4,
} as const;

export class UsageError extends Error {
  readonly code = 'usage';
}

/** Bad configuration (exit 3): a missing or malformed key, an unusable upstream. */
export class ConfigError extends Error {
  readonly code = 'config';
}
