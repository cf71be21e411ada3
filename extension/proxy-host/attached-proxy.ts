// Attaching to a Loopgate proxy another window already runs on the port (only
// one that proves it knows the token and forwards to the same upstream), and
// watching it while attached.
import type { ProxyIpcConfig } from '../../core/ipc.js';
import { DEFAULT_HOST } from '../../core/options.js';
import { portAnswers, probeHealth, upstreamMismatch } from '../probe-proxy.js';
import type { ProxyEndpoint } from './proxy-state.js';

/** While attached: how often the other proxy's port is checked, and every how many checks it must prove itself again. */
const ATTACHED_CHECK_MS = 3_000;
const FULL_CHECK_EVERY = 20;
/** Another window restarting on the same settings change keeps its old upstream this long at most. */
const MISMATCH_GRACE_MS = 4_000;

function proxyUrl(config: ProxyIpcConfig): string {
  return `http://${config.host ?? DEFAULT_HOST}:${config.port}`;
}

export function notOurs(port: number): string {
  return `Port ${port} is taken by something that is not this user's Loopgate proxy (it could not prove it knows the local token, so the token was not sent to it). Change loopgate.proxy.port, or stop that program.`;
}

/** Whether the proxy at `url` still proves itself and still matches the settings (read after the probe, which takes a while). */
export async function stillServes(url: string, token: string, readConfig: () => ProxyIpcConfig): Promise<boolean> {
  const v = await probeHealth(url, token);
  const config = readConfig();
  return v.kind === 'loopgate' && !upstreamMismatch(v.health, config.upstream, config.port) && url === proxyUrl(config);
}

export type AttachVerdict =
  | { kind: 'attach'; endpoint: ProxyEndpoint }
  | { kind: 'refuse'; message: string; code: string }
  /** Nothing answers on the port now. */
  | { kind: 'free' };

/** The port is taken: attach when it is this user's proxy on the same upstream, else say what to do. `free` when the port is free now. */
export async function attachOrRefuse(
  config: ProxyIpcConfig,
  token: string,
  log: (level: 'info', message: string) => void,
): Promise<AttachVerdict> {
  const url = proxyUrl(config);
  const deadline = Date.now() + MISMATCH_GRACE_MS;
  for (;;) {
    const v = await probeHealth(url, token);
    if (v.kind === 'unreachable') return { kind: 'free' };
    if (v.kind === 'unproven') {
      return {
        kind: 'refuse',
        message: v.noToken
          ? `Port ${config.port} is taken by a Loopgate proxy that runs without a local token (\`loopgate serve --no-token\`). It cannot prove it is this user's proxy, so this window does not use it: stop it, or change loopgate.proxy.port.`
          : notOurs(config.port),
        code: 'EADDRINUSE',
      };
    }
    const mismatch = upstreamMismatch(v.health, config.upstream, config.port);
    if (!mismatch) {
      log('info', `Port ${config.port} is taken by this user's Loopgate proxy (pid ${v.health.pid ?? '?'}); using it.`);
      const { siteUrl, baseUrl, simulator } = v.health;
      return { kind: 'attach', endpoint: { url, siteUrl, baseUrl, simulator } };
    }
    if (Date.now() >= deadline) return { kind: 'refuse', message: mismatch, code: 'upstream-mismatch' };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export interface AttachedWatchHooks {
  /** Whether this window still uses the proxy at `url`. */
  isCurrent(url: string): boolean;
  /** Whether a start is under way (it checks for itself). */
  isStarting(): boolean;
  /** The full proof: the health challenge and the settings. */
  stillServes(): Promise<boolean>;
  /** The proxy at `url` is gone or changed. */
  gone(url: string): Promise<unknown>;
}

/**
 * While attached, a timer checks that the other proxy is still there (a bare TCP
 * connect, which leaves nothing in its log; now and then the full proof). When it
 * is gone, `gone` runs: the host starts its own proxy, or attaches to whichever took its place.
 */
export class AttachedWatch {
  private timer: NodeJS.Timeout | undefined;
  private checks = 0;
  private checking = false;

  constructor(private readonly hooks: AttachedWatchHooks) {}

  watch(url: string): void {
    this.unwatch();
    this.checks = 0;
    this.timer = setInterval(() => void this.check(url), ATTACHED_CHECK_MS);
  }

  unwatch(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async check(url: string): Promise<void> {
    const { hooks } = this;
    if (!hooks.isCurrent(url) || this.checking || hooks.isStarting()) return;
    this.checking = true;
    try {
      const full = ++this.checks % FULL_CHECK_EVERY === 0;
      const alive = full ? await hooks.stillServes() : await portAnswers(url);
      // A user's Stop or a restart meanwhile is not ours to undo.
      if (alive || !hooks.isCurrent(url)) return;
      await hooks.gone(url);
    } finally {
      this.checking = false;
    }
  }
}
