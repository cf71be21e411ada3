// Messages between the VS Code extension and the proxy it forks
// (`loopgate serve --ipc`). The key and token travel only here: never in argv
// or the child's environment.

export interface ProxyIpcConfig {
  upstream?: string;
  port: number;
  logBodies: boolean;
  requireToken: boolean;
  bridge?: 'auto' | 'off' | 'always';
}

/** Parent (extension) → child (proxy). */
export type ToProxy =
  | { type: 'start'; config: ProxyIpcConfig; key?: string; token: string }
  | { type: 'set-key'; key?: string }
  | { type: 'stop' };

/** Child (proxy) → parent (extension). */
export type FromProxy =
  | { type: 'listening'; url: string; siteUrl?: string; baseUrl?: string; simulator: boolean }
  | { type: 'error'; code: string; message: string }
  | { type: 'traffic'; line: string; status: number; diagnosis?: string }
  | { type: 'stopped' };
