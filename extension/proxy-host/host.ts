// The extension's proxy, whichever runs it: our own child (./child-proxy.ts),
// restarted with backoff when it crashes (./restart-backoff.ts), or another
// window's proxy we attached to and watch (./attached-proxy.ts). This file
// decides the state; it stops only a proxy this window started.
import * as vscode from 'vscode';
import type { FromProxy, ProxyIpcConfig, ToProxy } from '../../core/ipc.js';
import { AttachedWatch, attachOrRefuse, notOurs, stillServes } from './attached-proxy.js';
import { ChildProxy, START_TIMEOUT_MS } from './child-proxy.js';
import { DoctorCalls, doctorUnavailable, type DoctorResult } from './doctor-call.js';
import type { ProxyEndpoint, ProxyState } from './proxy-state.js';
import { RestartBackoff, type BackoffClock } from './restart-backoff.js';
import type { TrafficEvent } from './proxy-events.js';

export interface ProxyHostOptions {
  /** Absolute path of dist/cli.js. */
  cliPath: string;
  token: string;
  readConfig(): ProxyIpcConfig;
  /** The stored keys, named, in routing order. */
  readKeys(): Thenable<Array<{ name: string; key: string }>>;
  /** The OTLP collector's headers from SecretStorage (sent to the child only when an endpoint is set). */
  readOtlpHeaders?(): Thenable<string | undefined>;
  /** Host-side messages (child stderr, restarts) for the log channel. */
  log(level: 'info' | 'warn' | 'error', message: string): void;
  /** The restart backoff's time; the real one by default. */
  clock?: BackoffClock;
}

export class ProxyHost implements vscode.Disposable {
  private readonly stateEmitter = new vscode.EventEmitter<ProxyState>();
  private readonly trafficEmitter = new vscode.EventEmitter<TrafficEvent>();
  private readonly logHealthEmitter = new vscode.EventEmitter<string | undefined>();
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onTraffic = this.trafficEmitter.event;
  private readonly keysEmitter = new vscode.EventEmitter<readonly string[]>();
  /** The names of the keys our proxy holds (the demo keys in demo mode). */
  readonly onDidChangeKeys = this.keysEmitter.event;
  keyNames: readonly string[] = [];
  /** The traffic log's trouble (a sentence), or undefined once it writes again. */
  readonly onDidChangeLogTrouble = this.logHealthEmitter.event;
  logTrouble: string | undefined;

  private current: ProxyState = { kind: 'stopped' };
  private child: ChildProxy | undefined;
  private starting: Promise<ProxyState> | undefined;
  /** Our child runs the simulator: it gets no key (the simulator's demo key is used). */
  private demo = false;
  /** Counts key changes, so a proxy that started meanwhile gets the newest keys. */
  private keysVersion = 0;
  private readonly backoff: RestartBackoff;
  private readonly doctorCalls = new DoctorCalls();
  private readonly attachedWatch = new AttachedWatch({
    isCurrent: (url) => this.current.kind === 'attached' && this.current.url === url,
    isStarting: () => this.starting !== undefined,
    stillServes: () => this.stillUsable(),
    gone: (url) => {
      this.opts.log(
        'warn',
        `The Loopgate proxy on ${url} that this window used is gone or changed; starting this window's own.`,
      );
      return this.startOnce();
    },
  });

  constructor(private readonly opts: ProxyHostOptions) {
    this.backoff = new RestartBackoff(opts.clock);
  }

  get state(): ProxyState {
    return this.current;
  }

  /** The endpoint local clients use, when a proxy (ours or another window's) is up. */
  get endpoint(): ProxyEndpoint | undefined {
    const s = this.current;
    return s.kind === 'running' || s.kind === 'attached' ? s : undefined;
  }

  /** pid of our child, when we run one (tests check its argv and environment). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get token(): string {
    return this.opts.token;
  }

  /** Starts (or attaches); resolves with the resulting state. Concurrent calls share one start. A user's start resets the crash count. */
  start(): Promise<ProxyState> {
    this.backoff.reset();
    return this.startOnce();
  }

  async restart(): Promise<ProxyState> {
    await this.stop();
    return this.start();
  }

  private startOnce(): Promise<ProxyState> {
    this.backoff.cancel();
    this.starting ??= this.stillUsable()
      .then((alive) => (alive ? this.current : this.spawn()))
      .finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** Another window's proxy may have gone away (or changed) since we attached: check before trusting it. */
  private async stillUsable(): Promise<boolean> {
    const s = this.current;
    if (s.kind === 'running') return true;
    if (s.kind !== 'attached') return false;
    return stillServes(s.url, this.opts.token, this.opts.readConfig);
  }

  /** Stops our child (never another window's proxy) and waits for it to exit. */
  async stop(): Promise<void> {
    this.backoff.cancel();
    if (this.starting) await this.starting.catch(() => undefined);
    const child = this.child;
    if (!child) {
      if (this.current.kind !== 'stopped') this.setState({ kind: 'stopped' });
      return;
    }
    await child.stop();
    this.setState({ kind: 'stopped' });
  }

  /** Our own child runs (not another window's proxy): it can be restarted to take new start-time secrets. */
  get ownsProxy(): boolean {
    return this.child !== undefined && this.current.kind === 'running';
  }

  /** Pushes the current keys to our child without a restart. */
  async pushKey(): Promise<void> {
    this.keysVersion++;
    // A proxy still starting was given the keys read before it was forked: spawn() pushes again once it listens.
    if (!this.child || this.current.kind !== 'running') return;
    // Demo mode keeps the demo keys (see spawn).
    if (this.demo) return;
    const keys = await this.opts.readKeys();
    // The child answers with the names it now holds ('keys'), and onDidChangeKeys fires then.
    this.send({ kind: 'set-keys', keys });
    this.opts.log('info', `keys: ${keys.length ? keys.map((k) => k.name).join(', ') : 'none'} handed to the proxy`);
  }

  /** Runs the proxy's doctor; resolves with its markdown report. */
  doctor(): Promise<DoctorResult> {
    if (!this.child || this.current.kind !== 'running')
      return Promise.reject(doctorUnavailable(this.current.kind === 'attached'));
    return this.doctorCalls.call((id) => this.send({ kind: 'doctor', id }));
  }

  dispose(): void {
    this.attachedWatch.unwatch();
    void this.stop();
    this.stateEmitter.dispose();
    this.trafficEmitter.dispose();
    this.logHealthEmitter.dispose();
    this.keysEmitter.dispose();
  }

  private async spawn(attempt = 0): Promise<ProxyState> {
    this.setState({ kind: 'starting' });
    const config = this.opts.readConfig();
    // Demo mode: the simulator must not receive the user's real key (it would answer 401, and the
    // key would leave SecretStorage for nothing). Without a key the child uses the demo key.
    this.demo = !config.upstream;
    const keysVersion = this.keysVersion;
    const keys = this.demo ? undefined : await this.opts.readKeys();
    // Secrets like the key: over IPC, and only to a proxy that will export.
    const otlpHeaders = config.otlp ? await this.opts.readOtlpHeaders?.() : undefined;
    let child: ChildProxy;
    try {
      child = ChildProxy.fork(
        this.opts.cliPath,
        { log: this.opts.log, onMessage: (m) => this.onMessage(m) },
        keys?.map((k) => k.key),
      );
    } catch (err) {
      return this.fail(`Could not start the proxy: ${(err as Error).message}`);
    }
    this.child = child;
    const startedAt = this.backoff.now();
    const outcome = await child.start({
      kind: 'start',
      config,
      keys,
      token: this.opts.token,
      ...(otlpHeaders ? { otlpHeaders } : {}),
    });

    if (outcome.kind === 'listening') {
      child.onExit((how, requested) => this.onChildExit(child, how, requested, startedAt));
      const { url, siteUrl, baseUrl, simulator, logFile } = outcome;
      this.keyNames = outcome.keys ?? [];
      this.keysEmitter.fire(this.keyNames);
      const state = this.setState({ kind: 'running', url, siteUrl, baseUrl, simulator, logFile });
      // Keys stored while it started (a user quick with Set API Key) would otherwise wait for the next change.
      if (this.keysVersion !== keysVersion)
        this.pushKey().catch((err: unknown) =>
          this.opts.log('error', `Could not hand the keys to the proxy: ${(err as Error).message}`),
        );
      return state;
    }
    this.child = undefined;
    child.discard();
    if (outcome.kind === 'error' && outcome.code === 'EADDRINUSE') {
      const verdict = await attachOrRefuse(config, this.opts.token, this.opts.log);
      if (verdict.kind === 'attach') return this.setState({ kind: 'attached', ...verdict.endpoint });
      if (verdict.kind === 'refuse') return this.fail(verdict.message, verdict.code);
      // The port was freed in between (the other proxy stopped): take it.
      if (attempt === 0) return this.spawn(1);
      return this.fail(notOurs(config.port), 'EADDRINUSE');
    }
    if (outcome.kind === 'error') return this.fail(outcome.message, outcome.code);
    if (outcome.kind === 'timeout')
      return this.fail(
        `The proxy did not start within ${START_TIMEOUT_MS / 1000} s. See the Loopgate output for details.`,
      );
    return this.fail(
      `The proxy exited during start-up (exit code ${outcome.code}). See the Loopgate output for details.`,
    );
  }

  private onMessage(m: FromProxy): void {
    if (!m || typeof m !== 'object') return;
    switch (m.kind) {
      case 'request':
      case 'health-probe':
      case 'hint':
      case 'alias':
        this.trafficEmitter.fire(m);
        return;
      case 'keys':
        this.keyNames = m.keys;
        this.keysEmitter.fire(this.keyNames);
        return;
      case 'log-health':
        this.opts.log(m.ok ? 'info' : 'warn', `Proxy ${m.message}`);
        this.logTrouble = m.ok ? undefined : m.message;
        this.logHealthEmitter.fire(this.logTrouble);
        return;
      case 'otlp-health':
        this.opts.log(m.ok ? 'info' : 'warn', `Proxy ${m.message}`);
        return;
      case 'doctor-result':
        this.doctorCalls.answer(m.id, { ok: m.ok, report: m.report });
        return;
      case 'error':
        if (this.current.kind === 'running') this.opts.log('error', `Proxy: ${m.message}`);
        return;
      // 'listening' and 'stopped' answer start() and stop() (child-proxy.ts).
    }
  }

  private onChildExit(child: ChildProxy, how: string, requested: boolean, startedAt: number): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.doctorCalls.childExited();
    if (requested) return;
    this.backoff.resetIfStable(startedAt);
    this.scheduleRestart(how);
  }

  /** Backoff restarts after a crash; a restart that fails during start-up counts as another crash. */
  private scheduleRestart(how: string): void {
    const delay = this.backoff.nextDelay();
    if (delay === undefined) {
      this.fail(
        `The proxy crashed ${this.backoff.crashes} times in a row (last: ${how}); not restarting. Start it again with Loopgate: Start Proxy.`,
      );
      return;
    }
    this.opts.log('warn', `The proxy exited unexpectedly (${how}); restarting in ${delay} ms.`);
    this.setState({ kind: 'failed', message: `The proxy exited (${how}); restarting`, retryInMs: delay });
    this.backoff.schedule(delay, () => {
      void this.startOnce().then((s) => {
        // A configuration problem or a taken port will not cure itself: stop retrying and show it.
        if (s.kind === 'failed' && s.code !== 'config' && s.code !== 'EADDRINUSE' && s.code !== 'upstream-mismatch')
          this.scheduleRestart('failed to start');
      });
    });
  }

  private send(message: ToProxy): void {
    this.child?.send(message);
  }

  private fail(message: string, code?: string): ProxyState {
    this.opts.log('error', message);
    return this.setState({ kind: 'failed', message, code });
  }

  private setState(state: ProxyState): ProxyState {
    if (state.kind === 'starting' && this.logTrouble) {
      // The old proxy's log trouble; the new one reports its own.
      this.logTrouble = undefined;
      this.logHealthEmitter.fire(undefined);
    }
    if (state.kind === 'attached') this.attachedWatch.watch(state.url);
    else this.attachedWatch.unwatch();
    this.current = state;
    this.stateEmitter.fire(state);
    return state;
  }
}
