// `loopgate run` gives each process it starts a credential of its own, so the
// proxy knows which run a request came from even when the tool names no
// session (issue 33 §1). It is derived from the local token (an HMAC of the
// run's facts), so the proxy checks it with no state and across a restart,
// and it never hands the tool the local token itself. It starts `lg-local-`,
// so every sink redacts it as it redacts the token (credential-shapes.ts).
// Pure: hashing only, no I/O.
import { createHmac } from 'node:crypto';
import { secretEquals } from './constant-time.js';

const PREFIX = 'lg-local-run_';
/** tool (a-z0-9-, ≤ 32), start time in ms (base 36), a nonce (base 36), the MAC (hex). */
const SHAPE = /^lg-local-run_([a-z0-9-]{1,32})_([0-9a-z]{1,12})_([0-9a-z]{4,16})_([0-9a-f]{32})$/;

export interface RunFacts {
  /** The tool's command name, lower-cased to [a-z0-9-]. */
  tool: string;
  /** When the run started (ms since the epoch). */
  started: number;
  /** Tells two runs of one tool started in the same millisecond apart. */
  nonce: string;
}

function mac(token: string, tool: string, started: string, nonce: string): string {
  return createHmac('sha256', token).update(`${tool}\n${started}\n${nonce}`).digest('hex').slice(0, 32);
}

/** The tool name as a credential can carry it: `/usr/bin/Claude.exe` → `claude`. */
export function runToolName(command: string): string {
  const base = command.split(/[\\/]/).pop() ?? command;
  const name = base
    .replace(/\.(exe|cmd|bat|js|mjs)$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32);
  return name || 'tool';
}

export function runCredential(token: string, facts: RunFacts): string {
  const started = facts.started.toString(36);
  return `${PREFIX}${facts.tool}_${started}_${facts.nonce}_${mac(token, facts.tool, started, facts.nonce)}`;
}

/**
 * The run a presented credential stands for, when it is one this token made; undefined otherwise.
 * `token` null: a --no-token proxy accepts any credential, so the shape alone is read.
 */
export function verifyRunCredential(token: string | null, presented: string | undefined): RunFacts | undefined {
  if (presented === undefined || !presented.startsWith(PREFIX)) return undefined;
  const m = SHAPE.exec(presented);
  if (!m) return undefined;
  const [, tool, started, nonce, given] = m as unknown as [string, string, string, string, string];
  if (token !== null && !secretEquals(mac(token, tool, started, nonce), given)) return undefined;
  return { tool, started: parseInt(started, 36), nonce };
}
