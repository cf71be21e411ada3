// What the extension knows about its proxy: where it is and whose it is.

export interface ProxyEndpoint {
  /** Proxy origin, e.g. http://127.0.0.1:8787 */
  url: string;
  siteUrl: string;
  baseUrl: string;
  simulator: boolean;
  logFile?: string;
}

export type ProxyState =
  | { kind: 'stopped' }
  | { kind: 'starting' }
  | ({ kind: 'running' } & ProxyEndpoint)
  /** Another window's proxy: we use it, but never stop it. */
  | ({ kind: 'attached' } & ProxyEndpoint)
  | { kind: 'failed'; message: string; code?: string; retryInMs?: number };
