// Messages between the VS Code extension and the proxy it forks
// (`loopgate serve --ipc`). The key and token travel only here: never in argv
// or the child's environment.
import type { BridgeMode } from '../rules/key-routing.js';

export interface ProxyIpcConfig {
  /** Upstream in any form the user pasted; undefined → embedded simulator (demo mode). */
  upstream?: string;
  port: number;
  host?: string;
  logBodies: boolean;
  /** The in-memory traffic ring for the Traffic view (loopgate.traffic.capture); default on. */
  capture?: boolean;
  requireToken: boolean;
  bridge?: BridgeMode;
  /** Traffic log file; default is the user's state dir. */
  logFile?: string;
  /** OTLP export: the collector (its headers travel beside the key, in the start message) and content capture. */
  otlp?: { endpoint: string; content: boolean };
  /** The `loopgate.aliases` setting: model FROM → TO (checked by the child, cli/aliases.ts). */
  aliases?: Record<string, string>;
  /** The workspace folder: loopgate.json is looked for from here upward (the child's own cwd is not the project). */
  projectDir?: string;
}

export interface IpcKey {
  name?: string;
  key: string;
}

/** Parent (extension) → child (proxy). */
export type ToProxy =
  /** `otlpHeaders`: the collector's headers from SecretStorage (OTEL_EXPORTER_OTLP_HEADERS form): secrets, like the key. */
  | { type: 'start'; config: ProxyIpcConfig; key?: string; keys?: IpcKey[]; token: string; otlpHeaders?: string }
  | { type: 'set-key'; key?: string }
  /** The editor's named keys replace the proxy's (each checked as LOOPGATE_API_KEY's entries are). */
  | { type: 'set-keys'; keys: IpcKey[] }
  | { type: 'doctor'; id: number }
  | { type: 'stop' };

/** Child (proxy) → parent (extension). */
export type FromProxy =
  | {
      type: 'listening';
      /** Proxy origin, e.g. http://127.0.0.1:8787 */
      url: string;
      /** Upstream {site_url} and {base_url} (the simulator's when simulator is true). */
      siteUrl: string;
      baseUrl: string;
      simulator: boolean;
      logFile?: string;
      /** The keys' names, in routing order. */
      keys?: string[];
    }
  | { type: 'error'; code: string; message: string }
  /** One redacted line per finished request, for the output channel and the status bar. */
  | { type: 'traffic'; line: string; status: number; diagnosis?: string }
  /** The traffic log started failing (ok false) or works again; once each way. */
  | { type: 'log-health'; ok: boolean; message: string }
  /** The OTLP export started dropping spans (ok false) or works again; once each way. */
  | { type: 'otlp-health'; ok: boolean; message: string }
  | { type: 'doctor-result'; id: number; ok: boolean; report: string }
  /** After set-keys: the names the proxy now routes between. */
  | { type: 'keys'; keys: string[] }
  | { type: 'stopped' };
