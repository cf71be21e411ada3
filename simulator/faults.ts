// The simulator-only request headers: injected faults and stream shaping.
import type { IncomingHttpHeaders } from 'node:http';
import { SimError } from './relay-errors.js';

export const FAULTS = [
  '500',
  '502',
  '503',
  '429',
  'stall-headers',
  'stall-body',
  'reset-before-headers',
  'reset-mid-stream',
  'error-event-mid-stream',
] as const;
export type Fault = (typeof FAULTS)[number];

export interface SimControls {
  fault?: Fault;
  /** Pause between stream events, in ms. */
  chunkDelayMs: number;
  /** Text chunks in a stream. */
  chunks: number;
  /** Minimum reply text size in bytes (0: natural size). */
  responseBytes: number;
}

const DEFAULT_CHUNKS = 5;
const MAX_BYTES = 64 * 1024 * 1024;

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim();
}

function intHeader(headers: IncomingHttpHeaders, name: string, min: number, max: number): number | undefined {
  const raw = single(headers, name);
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new SimError('invalid_request', `Invalid ${name} header: expected an integer from ${min} to ${max}`, name);
  }
  return Number(raw);
}

/** Reads the x-sim-* headers; a bad value is a 400 that names the header. */
export function readControls(
  headers: IncomingHttpHeaders,
  defaults: { chunkDelayMs?: number; chunks?: number } = {},
): SimControls {
  const rawFault = single(headers, 'x-sim-fault');
  if (rawFault !== undefined && rawFault !== '' && !(FAULTS as readonly string[]).includes(rawFault)) {
    throw new SimError(
      'invalid_request',
      `Invalid x-sim-fault header: expected one of ${FAULTS.join(', ')}`,
      'x-sim-fault',
    );
  }
  const controls: SimControls = {
    chunkDelayMs: intHeader(headers, 'x-sim-chunk-delay-ms', 0, 600_000) ?? defaults.chunkDelayMs ?? 0,
    chunks: intHeader(headers, 'x-sim-chunks', 1, 1_000_000) ?? defaults.chunks ?? DEFAULT_CHUNKS,
    responseBytes: intHeader(headers, 'x-sim-response-bytes', 0, MAX_BYTES) ?? 0,
  };
  if (rawFault) controls.fault = rawFault as Fault;
  return controls;
}

/** The error answered for the status-code faults. */
export function faultError(fault: Fault): SimError | undefined {
  switch (fault) {
    case '500':
      return new SimError('server_error', 'Simulated internal server error (x-sim-fault: 500). Retry later');
    case '502':
      return new SimError(
        'bad_gateway',
        'Simulated bad gateway: the upstream channel failed (x-sim-fault: 502). Retry later',
      );
    case '503':
      return new SimError(
        'service_unavailable',
        'Simulated overload: the service is temporarily unavailable (x-sim-fault: 503). Retry later',
      );
    case '429':
      return new SimError('rate_limit_exceeded', 'Simulated rate limit (x-sim-fault: 429). Retry after 1 s', null, 1);
    default:
      return undefined;
  }
}
