// One finished request, as our child reports it, and how the views classify it.

export interface TrafficEvent {
  line: string;
  status: number;
  diagnosis?: string;
}

/** An error status, or a 200 stream that broke or ended in an error event (the record names its code). */
export function isFailure(t: TrafficEvent): boolean {
  return t.status >= 400 || (t.status > 0 && t.diagnosis !== undefined);
}

/** Another window's answered health check (attach, or its periodic proof): not a request of this user's tools. */
export function isHealthProbe(t: TrafficEvent): boolean {
  return t.status === 200 && t.line.startsWith('GET /_loopgate/health ');
}
