// Whole-number flags (--port, --retries, --limit, …) and the running proxy's origin from --port/--host: serve reads
// them, and so do the commands that talk to the proxy it started (env, run, tail, export, …), with one wording.
import { UsageError } from './command.js';
import { proxyOrigin } from '../rules/addresses/urls.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../core/options.js';

export function intOption(
  name: string,
  value: string | undefined,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(
      max === Number.MAX_SAFE_INTEGER
        ? `--${name} takes a whole number ≥ ${min} (got "${value}").`
        : `--${name} takes a whole number from ${min} to ${max} (got "${value}").`,
    );
  }
  return n;
}

/** The origin of the running proxy from --port/--host (defaults as serve's): for env and run. */
export function runningProxyUrl(values: { port?: string; host?: string }): string {
  const port = portOption(values.port) ?? DEFAULT_PORT;
  if (port === 0) throw new UsageError('--port: give the port the proxy listens on (serve prints it), not 0.');
  return proxyOrigin(values.host ?? DEFAULT_HOST, port);
}

/** A TCP port; 0 picks a free one. */
export function portOption(value: string | undefined): number | undefined {
  return intOption('port', value, 0, 65535);
}
