// Loopgate's settings: the types and the one reader. Schemas live in package.json.
import * as vscode from 'vscode';
import type { ProxyIpcConfig } from '../core/ipc.js';
import { DEFAULT_BRIDGE, DEFAULT_HOST, DEFAULT_PORT, type BridgeMode } from '../core/options.js';

/** loopgate.chat.modelOverrides: one model's limits and capabilities (lm/model-catalog.ts applies them). */
export interface ModelOverride {
  maxInputTokens?: number;
  maxOutputTokens?: number;
  imageInput?: boolean;
  toolCalling?: boolean;
}
export type ModelOverrides = Readonly<Record<string, ModelOverride>>;

export interface LoopgateSettings {
  /** Raw text of loopgate.baseUrl, trimmed; '' means demo mode (simulator). */
  baseUrl: string;
  proxy: {
    port: number;
    autoStart: boolean;
    logBodies: boolean;
    requireToken: boolean;
    bridge: BridgeMode;
  };
  terminal: { injectEnv: boolean };
  /** The proxy keeps recent requests in memory for the Traffic view (loopgate.traffic.capture). */
  traffic: { capture: boolean; groupBySession: boolean };
  /** VS Code's chat (1.104+): per-model limits and capabilities. */
  chat: { modelOverrides: ModelOverrides };
  /** The OTLP collector (empty: no export) and whether message content goes too. */
  otlp: { endpoint: string; captureContent: boolean };
  /** Model aliases FROM → TO; the proxy checks them (cli/aliases.ts) and a workspace loopgate.json wins. */
  aliases: Record<string, string>;
  /** What models are priced as (loopgate.json "prices" wins): the proxy checks them (cli/prices.ts). */
  prices: Record<string, unknown>;
  /** Budget caps (user settings only: a cloned project's loopgate.json may only lower them, cli/budgets.ts). */
  budgets: Record<string, unknown>;
  /** The first workspace folder: where the proxy looks for loopgate.json (upward). */
  projectDir?: string;
}

const SECTION = 'loopgate';

/**
 * Settings whose change needs the proxy restarted (a key change does not). Not
 * loopgate.proxy.autoStart: it changes nothing in a running proxy, and a restart drops open streams.
 */
export const PROXY_SETTINGS = [
  'loopgate.baseUrl',
  'loopgate.proxy.port',
  'loopgate.proxy.requireToken',
  'loopgate.proxy.logBodies',
  'loopgate.proxy.bridge',
  'loopgate.otlp.endpoint',
  'loopgate.otlp.captureContent',
  'loopgate.aliases',
  'loopgate.prices',
  'loopgate.budgets',
  'loopgate.traffic.capture',
] as const;

/**
 * Where the key goes and who may use it are the user's decisions: a cloned
 * repo's .vscode/settings.json must not redirect the key to its own host or
 * switch the token off. These settings are read from user settings only.
 */
function userOnly<T>(c: vscode.WorkspaceConfiguration, key: string, fallback: T): T {
  const i = c.inspect<T>(key);
  return i?.globalValue ?? i?.defaultValue ?? fallback;
}

export function readSettings(): LoopgateSettings {
  const c = vscode.workspace.getConfiguration(SECTION);
  const port = c.get<number>('proxy.port', DEFAULT_PORT);
  const bridge = c.get<string>('proxy.bridge', DEFAULT_BRIDGE);
  return {
    baseUrl: (userOnly<string>(c, 'baseUrl', '') ?? '').trim(),
    proxy: {
      port: Number.isInteger(port) && port > 0 && port < 65536 ? port : DEFAULT_PORT,
      autoStart: c.get<boolean>('proxy.autoStart', true),
      logBodies: userOnly<boolean>(c, 'proxy.logBodies', false),
      requireToken: userOnly<boolean>(c, 'proxy.requireToken', true),
      bridge: bridge === 'auto' || bridge === 'off' || bridge === 'always' ? bridge : DEFAULT_BRIDGE,
    },
    terminal: { injectEnv: c.get<boolean>('terminal.injectEnv', true) },
    // Whether prompts are kept in memory is the user's decision, like the log's bodies.
    traffic: {
      capture: userOnly<boolean>(c, 'traffic.capture', true),
      groupBySession: c.get<boolean>('traffic.groupBySession', false),
    },
    chat: { modelOverrides: objectOr(c.get<unknown>('chat.modelOverrides'), {}) as ModelOverrides },
    // Where the traffic's spans go is the user's decision (machine-scoped, and read from user settings only).
    otlp: {
      endpoint: (userOnly<string>(c, 'otlp.endpoint', '') ?? '').trim(),
      captureContent: userOnly<boolean>(c, 'otlp.captureContent', false),
    },
    // Like loopgate.json, a project may carry its aliases: they only rename models, they never move the key.
    aliases: objectOr(c.get<unknown>('aliases'), {}) as Record<string, string>,
    prices: objectOr(c.get<unknown>('prices'), {}) as Record<string, unknown>,
    budgets: objectOr(userOnly<unknown>(c, 'budgets', {}), {}) as Record<string, unknown>,
    projectDir: vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath,
  };
}

function objectOr<T extends object>(v: unknown, fallback: T): T | object {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : fallback;
}

/** What the forked proxy is started with (the key and token go separately). */
export function proxyConfig(s: LoopgateSettings): ProxyIpcConfig {
  const { port, logBodies, requireToken, bridge } = s.proxy;
  const otlp = s.otlp.endpoint ? { endpoint: s.otlp.endpoint, content: s.otlp.captureContent } : undefined;
  const aliases = Object.keys(s.aliases).length ? { aliases: s.aliases } : {};
  const prices = Object.keys(s.prices).length ? { prices: s.prices } : {};
  return {
    upstream: s.baseUrl || undefined,
    port,
    host: DEFAULT_HOST,
    logBodies,
    ...(s.traffic.capture ? {} : { capture: false }),
    requireToken,
    bridge,
    ...(otlp ? { otlp } : {}),
    ...aliases,
    ...prices,
    ...(Object.keys(s.budgets).length ? { budgets: s.budgets } : {}),
    ...(s.projectDir ? { projectDir: s.projectDir } : {}),
  };
}
