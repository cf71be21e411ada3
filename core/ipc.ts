// Messages between the VS Code extension and the proxy it forks
// (`loopgate serve --ipc`): one definition for both ends. The key and token
// travel only here: never in argv or the child's environment.
import type { RequestLineParts } from './request-line.js';
import type { BridgeMode } from './options.js';

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
  /** The `loopgate.prices` setting: model → priced model or USD per million tokens (checked by the child, cli/prices.ts). */
  prices?: Record<string, unknown>;
  /** The `loopgate.budgets` setting (user settings only): caps per session and key (checked by the child, cli/budgets.ts). */
  budgets?: Record<string, unknown>;
  /** The workspace folder: loopgate.json is looked for from here upward (the child's own cwd is not the project). */
  projectDir?: string;
}

export interface IpcKey {
  name?: string;
  key: string;
}

/**
 * Parent (extension) → child (proxy). Both directions are unions on `kind`:
 * each end switches on it, and no message is told from another by its text.
 */
export type ToProxy =
  /** `otlpHeaders`: the collector's headers from SecretStorage (OTEL_EXPORTER_OTLP_HEADERS form): secrets, like the key. */
  | { kind: 'start'; config: ProxyIpcConfig; key?: string; keys?: IpcKey[]; token: string; otlpHeaders?: string }
  | { kind: 'set-key'; key?: string }
  /** The editor's named keys replace the proxy's (each checked as LOOPGATE_API_KEY's entries are). */
  | { kind: 'set-keys'; keys: IpcKey[] }
  | { kind: 'doctor'; id: number }
  | { kind: 'stop' };

/** Child (proxy) → parent (extension). */
export type FromProxy =
  | {
      kind: 'listening';
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
  | { kind: 'error'; code: string; message: string }
  /**
   * A client's finished request, in parts (requestLine joins them as the proxy's console does):
   * the redacted line up to its code, the code (diagnosis or stream error) and the hint in words,
   * so the editor can say more about a code without cutting a string; and for the status bar its
   * status (0: no answer) and whether it failed (core/outcome.ts requestFailed, decided once, by
   * the proxy).
   */
  | ({ kind: 'request'; status: number; failed: boolean } & RequestLineParts)
  /** A window's answered health check (attach, or its periodic proof): logged by the proxy, not a request of the user's tools. */
  | { kind: 'health-probe'; line: string }
  /** A hint about the user's own configuration (keys, aliases, OTLP settings): once per cause. */
  | { kind: 'hint'; text: string }
  /** One model alias in force (`FROM -> TO (source)`); all of them come before 'listening'. */
  | { kind: 'alias'; text: string }
  /** The traffic log started failing (ok false) or works again; once each way. */
  | { kind: 'log-health'; ok: boolean; message: string }
  /** The OTLP export started dropping spans (ok false) or works again; once each way. */
  | { kind: 'otlp-health'; ok: boolean; message: string }
  | { kind: 'doctor-result'; id: number; ok: boolean; report: string }
  /** After set-keys: the names the proxy now routes between. */
  | { kind: 'keys'; keys: string[] }
  | { kind: 'stopped' };
