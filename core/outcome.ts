// Did a request fail? One answer for the proxy's error count, the OTLP span's
// status, the Traffic view, `loopgate tail --errors`, `loopgate replay`'s exit
// code and the editor's status bar and output channel (the proxy decides it and
// sends the verdict, core/ipc.ts): no answer (status 0),
// an error status, or a 200 stream that broke or ended in an error event (its
// record names the code), unless the client itself left. Pure.

export interface Outcome {
  status: number;
  errorCode?: string;
  clientAborted?: boolean;
}

export function requestFailed(rec: Outcome): boolean {
  return rec.status === 0 || rec.status >= 400 || (rec.errorCode !== undefined && !rec.clientAborted);
}
