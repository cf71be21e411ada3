// `loopgate run` gives each process it starts a credential of its own, so the
// proxy knows which run a request came from even when the tool names no
// session (issue 33 §1). It is derived from the local token (an HMAC of the
// run's facts), so the proxy checks it across a restart, and it never hands
// the tool the local token itself. It is narrower than the token (issue 39
// H-4): the model API only (never /_loopgate/*), and only while its run lives
// (runLifetime below; the proxy's run book knows which runs live or ended).
// Every sink redacts it as it redacts the token: the proxy registers the
// credentials it sees as known secrets, and its shape is masked wherever it
// stands (credential-shapes.ts). Pure: hashing only, no I/O.
import { createHmac } from 'node:crypto';
import { secretEquals } from './constant-time.js';

export const RUN_CREDENTIAL_PREFIX = 'lg-local-run_';
const PREFIX = RUN_CREDENTIAL_PREFIX;
/** tool (a-z0-9-, ≤ 32), start time in ms (base 36), a nonce (base 36), the MAC (hex): the redactor masks this shape. */
const RUN_CREDENTIAL_SOURCE = 'lg-local-run_[a-z0-9-]{1,32}_[0-9a-z]{1,12}_[0-9a-z]{4,16}_[0-9a-f]{32}';
/** A hex digit pair as a regex that takes either letter case. */
function hexPair(byte: number): string {
  return [...byte.toString(16).padStart(2, '0')]
    .map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d))
    .join('');
}
const PREFIX_BYTES = [...Buffer.from(RUN_CREDENTIAL_PREFIX)];
/**
 * The run credential's shape in each form the token is searched in (known-secrets.ts secretForms), so a credential
 * this proxy never saw (another run's, another proxy's) is masked too: plain after any character (`\\n`, `%20`),
 * hex, base64 (the prefix's three alignments; base64url is the same here), and wholly `\\u`- or %-escaped.
 */
export const RUN_CREDENTIAL_SHAPES = new RegExp(
  [
    RUN_CREDENTIAL_SOURCE,
    `${PREFIX_BYTES.map(hexPair).join('')}[0-9a-fA-F]{80,}`,
    '(?:bGctbG9jYWwtcnVu|xnLWxvY2FsLXJ1|sZy1sb2NhbC1ydW5f)[A-Za-z0-9+/_-]{48,}',
    `${PREFIX_BYTES.map((b) => `\\\\u00${hexPair(b)}`).join('')}(?:\\\\u00[0-9a-fA-F]{2}|[a-z0-9_-])+`,
    `${PREFIX_BYTES.map((b) => `%${hexPair(b)}`).join('')}(?:%[0-9a-fA-F]{2}|[a-z0-9_-])+`,
  ].join('|'),
  'g',
);
// Each shape above holds one of these: a plain search for them lets text without any skip the regex (it would try
// its alternatives at every position, doubling the redactor's time on prose).
const HEX_PREFIX = Buffer.from(RUN_CREDENTIAL_PREFIX).toString('hex');
const SHAPE_MARKS = [
  RUN_CREDENTIAL_PREFIX,
  HEX_PREFIX,
  HEX_PREFIX.toUpperCase(),
  'bGctbG9jYWwtcnVu',
  'xnLWxvY2FsLXJ1',
  'sZy1sb2NhbC1ydW5f',
  '\\u006c\\u0067',
  '\\u006C\\u0067',
  '%6c%67',
  '%6C%67',
];

/** False when s cannot hold a run credential's shape (RUN_CREDENTIAL_SHAPES). */
export function mayHoldRunCredential(s: string): boolean {
  for (const mark of SHAPE_MARKS) if (s.includes(mark)) return true;
  return false;
}
const SHAPE = /^lg-local-run_([a-z0-9-]{1,32})_([0-9a-z]{1,12})_([0-9a-z]{4,16})_([0-9a-f]{32})$/;

/** A run the proxy has not heard of (it restarted since, or the run is older than it) counts this long from its start. */
export const RUN_UNREGISTERED_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** Clocks of one machine agree: a start later than this ahead of the proxy's clock is forged. */
const RUN_CLOCK_SKEW_MS = 5 * 60 * 1000;

/** What the proxy knows of a run: registered by `loopgate run` and still going, ended, or neither. */
export type RunState = 'live' | 'ended' | 'unknown';

/** Whether a credential's run may still call the model API; why not, in words that say what to do. */
export type RunLifetime = { ok: true } | { ok: false; code: string; reason: string };

/** A start time as ISO text; one past what a Date holds is said in milliseconds (toISOString would throw). */
function when(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? `${ms} ms after 1970` : d.toISOString();
}

export function runLifetime(facts: RunFacts, state: RunState, now: number): RunLifetime {
  const restart = 'Start the tool again with `loopgate run` (it gets a fresh credential).';
  if (facts.started > now + RUN_CLOCK_SKEW_MS)
    return {
      ok: false,
      code: 'run-credential-future',
      reason: `This run credential says its run starts ${when(facts.started)}, later than now: it was not made by \`loopgate run\`. ${restart}`,
    };
  if (state === 'ended')
    return {
      ok: false,
      code: 'run-credential-ended',
      reason: `The run this credential was made for has ended. ${restart}`,
    };
  if (state === 'unknown' && now - facts.started > RUN_UNREGISTERED_MAX_AGE_MS)
    return {
      ok: false,
      code: 'run-credential-expired',
      reason: `This run credential is from a run started ${when(facts.started)}, which this proxy does not know as running; such a credential counts for 24 hours from its start. ${restart}`,
    };
  return { ok: true };
}

/** The run a credential names, for the run book (one key per run). */
export function runKey(facts: RunFacts): string {
  return `${facts.tool}_${facts.started.toString(36)}_${facts.nonce}`;
}

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
