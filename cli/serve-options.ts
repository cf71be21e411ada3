// serve's flags that need more than parseArgs: the cassette flags (--replay, --on-miss, --match-ignore), the ring
// (--no-capture, --capture-*) and the fault rules. Each refuses a bad combination with what to fix (a UsageError).
import { UsageError } from './command.js';
import { intOption } from './int-options.js';
import type { ReplaySettings } from './start-serve.js';
import { ignorePathProblem } from '../rules/cassettes/cassette-settings.js';
import { parseFaultRule } from '../rules/faults/fault-rules.js';
import { loadProjectFile } from '../storage/config/find-project-file.js';
import type { FaultRule, FaultSource } from '../core/fault.js';
import type { ProxyOptions } from '../core/options.js';

export const MIB = 1024 * 1024;

/**
 * --replay DIR [--replay-speed X] [--on-miss MODE]: refused with anything that would send requests elsewhere
 * (only --on-miss record sends anything on, and only the misses).
 */
export function replayOption(values: {
  replay?: string;
  record?: string;
  upstream?: string;
  'replay-speed'?: string;
  'on-miss'?: string;
}): { dir: string; speed: number; onMiss: ReplaySettings['onMiss'] } | undefined {
  const speedText = values['replay-speed'];
  const onMiss = values['on-miss'];
  if (values.replay === undefined) {
    if (speedText !== undefined) throw new UsageError('--replay-speed goes with --replay DIR.');
    if (onMiss !== undefined) throw new UsageError('--on-miss goes with --replay DIR.');
    return undefined;
  }
  if (onMiss !== undefined && !ON_MISS.includes(onMiss as ReplaySettings['onMiss']))
    throw new UsageError(`--on-miss takes fail, record or simulate (got "${onMiss}").`);
  if (values.upstream !== undefined && onMiss !== 'record')
    throw new UsageError(
      onMiss === 'simulate'
        ? '--on-miss simulate answers misses from the embedded simulator: leave out --upstream (or use --on-miss record to record them from it).'
        : '--replay answers from the cassette, not an upstream: leave out --upstream (or add --on-miss record to send misses to it and record them).',
    );
  if (values.record !== undefined)
    throw new UsageError(
      '--record and --replay together: to add misses to the cassette use --replay DIR --on-miss record; else record into another directory, or replay alone.',
    );
  const speed = speedText === undefined ? 1 : Number(speedText);
  if (!/^\d+(\.\d+)?$/.test(speedText ?? '1') || !Number.isFinite(speed))
    throw new UsageError(
      `--replay-speed takes a number from 0 (as fast as possible) up, 1 as recorded (got "${speedText}").`,
    );
  return { dir: values.replay, speed, onMiss: (onMiss ?? 'fail') as ReplaySettings['onMiss'] };
}

const ON_MISS: ReadonlyArray<ReplaySettings['onMiss']> = ['fail', 'record', 'simulate'];

/** --match-ignore PATH (repeatable): only with a cassette, each a path the match can use. */
export function matchIgnoreOption(values: { 'match-ignore'?: string[]; record?: string; replay?: string }): string[] {
  const paths = values['match-ignore'] ?? [];
  if (paths.length && values.record === undefined && values.replay === undefined)
    throw new UsageError('--match-ignore goes with --record DIR or --replay DIR.');
  for (const path of paths) {
    const problem = ignorePathProblem(path);
    if (problem) throw new UsageError(`--match-ignore: ${problem}`);
  }
  return paths;
}

/** --no-capture, or the ring's limits. */
export function captureOption(values: {
  'no-capture'?: boolean;
  'capture-requests'?: string;
  'capture-mb'?: string;
}): ProxyOptions['capture'] {
  const entries = intOption('capture-requests', values['capture-requests'], 1);
  const mb = intOption('capture-mb', values['capture-mb'], 1);
  if (values['no-capture']) {
    if (entries !== undefined || mb !== undefined)
      throw new UsageError('--no-capture turns the ring off: leave out --capture-requests and --capture-mb.');
    return false;
  }
  return { entries, bytes: mb === undefined ? undefined : mb * MIB };
}

/** --fault values (a bad one is a usage error saying what to fix), after loopgate.json's "faults" (read and checked with
 * the aliases: a bad one there stopped the start already). */
export function faultRules(
  flags: readonly string[] | undefined,
  projectDir: string | undefined,
): ProxyOptions['faults'] {
  const out: Array<{ rule: FaultRule; source: FaultSource }> = [];
  const loaded = projectDir === undefined ? undefined : loadProjectFile(projectDir);
  if (loaded?.ok) for (const rule of loaded.read.faults) out.push({ rule, source: 'config' });
  for (const text of flags ?? []) {
    const parsed = parseFaultRule(text);
    if (!parsed.ok) throw new UsageError(`--fault ${JSON.stringify(text)}: ${parsed.problem}`);
    out.push({ rule: parsed.rule, source: 'cli' });
  }
  return out.length ? out : undefined;
}
