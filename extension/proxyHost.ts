// Runs the proxy (`loopgate serve --ipc`) in a forked child, restarts it with
// backoff when it crashes, attaches to a Loopgate proxy another window already
// runs on the port (only one that proves it knows the token and forwards to the
// same upstream), watches it while attached, and stops only a proxy this window started.
import { fork, type ChildProcess } from 'node:child_process';
import * as vscode from 'vscode';
import type { FromProxy, ProxyIpcConfig, ToProxy } from '../proxy/ipc.js';
import { DEFAULT_HOST } from '../proxy/pipeline/options.js';
import { childEnv } from './childEnv.js';
import { portAnswers, probeHealth, upstreamMismatch } from './health.js';

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

export interface ProxyHostOptions {
  /** Absolute path of dist/cli.js. */
  cliPath: string;
  token: string;
  readConfig(): ProxyIpcConfig;
  readKey(): Thenable<string | undefined>;
  /** Host-side messages (child stderr, restarts) for the log channel. */
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 3_000;
const DOCTOR_TIMEOUT_MS = 60_000;
/** Restart delays after consecutive crashes; then we give up and say so. */
export const BACKOFF_MS = [500, 1_000, 2_000, 4_000, 8_000, 16_000];
/** A child that lived this long resets the crash counter. */
const STABLE_MS = 60_000;
/** While attached: how often the other proxy's port is checked, and every how many checks it must prove itself again. */
export const ATTACHED_CHECK_MS = 3_000;
const FULL_CHECK_EVERY = 20;
/** Another window restarting on the same settings change keeps its old upstream this long at most. */
const MISMATCH_GRACE_MS = 4_000;

export class ProxyHost implements vscode.Disposable {
  private readonly stateEmitter = new vscode.EventEmitter<ProxyState>();
  private readonly trafficEmitter = new vscode.EventEmitter<TrafficEvent>();
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onTraffic = this.trafficEmitter.event;

  private current: ProxyState = { kind: 'stopped' };
  private child: ChildProcess | undefined;
  private stopping = false;
  private crashes = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private nextDoctorId = 1;
  private readonly doctorWaiters = new Map<number, (r: { ok: boolean; report: string }) => void>();
  private starting: Promise<ProxyState> | undefined;
  private attachedTimer: NodeJS.Timeout | undefined;
  private attachedChecks = 0;
  private checkingAttached = false;
  /** Our child runs the simulator: it gets no key (the simulator's demo key is used). */
  private demo = false;

  constructor(private readonly opts: ProxyHostOptions) {}

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
    this.crashes = 0;
    return this.startOnce();
  }

  async restart(): Promise<ProxyState> {
    await this.stop();
    return this.start();
  }

  private startOnce(): Promise<ProxyState> {
    this.clearRestart();
    this.starting ??= this.attachedStillAlive()
      .then((alive) => (alive ? this.current : this.spawn()))
      .finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** Another window's proxy may have gone away (or changed) since we attached: check before trusting it. */
  private async attachedStillAlive(): Promise<boolean> {
    const s = this.current;
    if (s.kind === 'running') return true;
    if (s.kind !== 'attached') return false;
    const v = await probeHealth(s.url, this.opts.token);
    const config = this.opts.readConfig();
    return v.kind === 'loopgate' && !upstreamMismatch(v.health, config.upstream, config.port) && s.url === this.urlOf(config);
  }

  /**
   * While attached, a timer checks that the other proxy is still there (a bare TCP
   * connect, which leaves nothing in its log; now and then the full proof). When it
   * is gone, this window starts its own proxy, or attaches to whichever took its place.
   */
  private watchAttached(url: string): void {
    this.unwatchAttached();
    this.attachedChecks = 0;
    this.attachedTimer = setInterval(() => void this.checkAttached(url), ATTACHED_CHECK_MS);
  }

  private unwatchAttached(): void {
    if (this.attachedTimer) clearInterval(this.attachedTimer);
    this.attachedTimer = undefined;
  }

  private async checkAttached(url: string): Promise<void> {
    const isCurrent = () => this.current.kind === 'attached' && this.current.url === url;
    if (!isCurrent() || this.checkingAttached || this.starting) return;
    this.checkingAttached = true;
    try {
      const full = ++this.attachedChecks % FULL_CHECK_EVERY === 0;
      const alive = full ? await this.attachedStillAlive() : await portAnswers(url);
      // A user's Stop or a restart meanwhile is not ours to undo.
      if (alive || !isCurrent()) return;
      this.opts.log('warn', `The Loopgate proxy on ${url} that this window used is gone or changed; starting this window's own.`);
      await this.startOnce();
    } finally {
      this.checkingAttached = false;
    }
  }

  /** Stops our child (never another window's proxy) and waits for it to exit. */
  async stop(): Promise<void> {
    this.clearRestart();
    if (this.starting) await this.starting.catch(() => undefined);
    const child = this.child;
    if (!child) {
      if (this.current.kind !== 'stopped') this.setState({ kind: 'stopped' });
      return;
    }
    this.stopping = true;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
    });
    this.send({ type: 'stop' });
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
    this.stopping = false;
    this.setState({ kind: 'stopped' });
  }

  /** Pushes the current key to our child without a restart. */
  async pushKey(): Promise<void> {
    if (!this.child) return;
    // Demo mode keeps the demo key (see spawn).
    const key = this.demo ? undefined : await this.opts.readKey();
    this.send({ type: 'set-key', key: key || undefined });
  }

  /** Runs the proxy's doctor; resolves with its markdown report. */
  doctor(): Promise<{ ok: boolean; report: string }> {
    if (!this.child || this.current.kind !== 'running') {
      return Promise.reject(
        new Error(
          this.current.kind === 'attached'
            ? 'This window uses the proxy another VS Code window started. Run the diagnosis in that window, or run `loopgate doctor` in a terminal.'
            : 'The Loopgate proxy is not running. Start it (Loopgate: Start Proxy), then run the diagnosis again.',
        ),
      );
    }
    const id = this.nextDoctorId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.doctorWaiters.delete(id);
        reject(new Error(`The diagnosis did not finish within ${DOCTOR_TIMEOUT_MS / 1000} s.`));
      }, DOCTOR_TIMEOUT_MS);
      this.doctorWaiters.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      this.send({ type: 'doctor', id });
    });
  }

  dispose(): void {
    this.unwatchAttached();
    void this.stop();
    this.stateEmitter.dispose();
    this.trafficEmitter.dispose();
  }

  private urlOf(config: ProxyIpcConfig): string {
    return `http://${config.host ?? DEFAULT_HOST}:${config.port}`;
  }

  private async spawn(attempt = 0): Promise<ProxyState> {
    this.setState({ kind: 'starting' });
    const config = this.opts.readConfig();
    // Demo mode: the simulator must not receive the user's real key (it would answer 401, and the
    // key would leave SecretStorage for nothing). Without a key the child uses the demo key.
    this.demo = !config.upstream;
    const key = this.demo ? undefined : await this.opts.readKey();
    let child: ChildProcess;
    try {
      child = fork(this.opts.cliPath, ['serve', '--ipc'], {
        env: childEnv(process.env),
        stdio: ['pipe', 'pipe', 'pipe', 'ipc'],
        // A smaller young generation keeps RSS near 130 MB with 1,000 open streams instead of ~200 MB,
        // at no measurable CPU cost (README, Performance).
        execArgv: ['--max-semi-space-size=4'],
      });
    } catch (err) {
      return this.fail(`Could not start the proxy: ${(err as Error).message}`);
    }
    this.child = child;
    const startedAt = Date.now();
    child.stdout?.on('data', (d: Buffer) => this.opts.log('info', d.toString('utf8').trimEnd()));
    child.stderr?.on('data', (d: Buffer) => this.opts.log('warn', d.toString('utf8').trimEnd()));
    child.on('message', (m: unknown) => this.onMessage(m as FromProxy));

    const outcome = await new Promise<FromProxy | { type: 'exit'; code: number | null } | { type: 'timeout' }>((resolve) => {
      const timer = setTimeout(() => resolve({ type: 'timeout' }), START_TIMEOUT_MS);
      const onMessage = (m: FromProxy) => {
        if (m?.type !== 'listening' && m?.type !== 'error') return;
        done(m);
      };
      const onExit = (code: number | null) => done({ type: 'exit', code });
      const done = (r: FromProxy | { type: 'exit'; code: number | null } | { type: 'timeout' }) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(r);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.once('error', (err) => this.opts.log('error', `Proxy process error: ${err.message}`));
      this.send({ type: 'start', config, key: key || undefined, token: this.opts.token });
    });

    if (outcome.type === 'listening') {
      child.once('exit', (code, signal) => this.onChildExit(child, code, signal, startedAt));
      const { url, siteUrl, baseUrl, simulator, logFile } = outcome;
      return this.setState({ kind: 'running', url, siteUrl, baseUrl, simulator, logFile });
    }
    this.child = undefined;
    if (child.exitCode === null && child.signalCode === null) child.kill();
    if (outcome.type === 'error' && outcome.code === 'EADDRINUSE') {
      const attached = await this.attachOrRefuse(config);
      if (attached) return attached;
      // The port was freed in between (the other proxy stopped): take it.
      if (attempt === 0) return this.spawn(1);
      return this.fail(notOurs(config.port), 'EADDRINUSE');
    }
    if (outcome.type === 'error') return this.fail(outcome.message, outcome.code);
    if (outcome.type === 'timeout') return this.fail(`The proxy did not start within ${START_TIMEOUT_MS / 1000} s. See the Loopgate output for details.`);
    return this.fail(`The proxy exited during start-up (exit code ${(outcome as { code: number | null }).code}). See the Loopgate output for details.`);
  }

  /** The port is taken: attach when it is this user's proxy on the same upstream, else say what to do. Undefined when the port is free now. */
  private async attachOrRefuse(config: ProxyIpcConfig): Promise<ProxyState | undefined> {
    const url = this.urlOf(config);
    const deadline = Date.now() + MISMATCH_GRACE_MS;
    for (;;) {
      const v = await probeHealth(url, this.opts.token);
      if (v.kind === 'unreachable') return undefined;
      if (v.kind === 'unproven') {
        return this.fail(
          v.noToken
            ? `Port ${config.port} is taken by a Loopgate proxy that runs without a local token (\`loopgate serve --no-token\`). It cannot prove it is this user's proxy, so this window does not use it: stop it, or change loopgate.proxy.port.`
            : notOurs(config.port),
          'EADDRINUSE',
        );
      }
      const mismatch = upstreamMismatch(v.health, config.upstream, config.port);
      if (!mismatch) {
        this.opts.log('info', `Port ${config.port} is taken by this user's Loopgate proxy (pid ${v.health.pid ?? '?'}); using it.`);
        const { siteUrl, baseUrl, simulator } = v.health;
        return this.setState({ kind: 'attached', url, siteUrl, baseUrl, simulator });
      }
      if (Date.now() >= deadline) return this.fail(mismatch, 'upstream-mismatch');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  private onMessage(m: FromProxy): void {
    if (!m || typeof m !== 'object') return;
    if (m.type === 'traffic') this.trafficEmitter.fire({ line: m.line, status: m.status, diagnosis: m.diagnosis });
    else if (m.type === 'doctor-result') {
      this.doctorWaiters.get(m.id)?.({ ok: m.ok, report: m.report });
      this.doctorWaiters.delete(m.id);
    } else if (m.type === 'error' && this.current.kind === 'running') {
      this.opts.log('error', `Proxy: ${m.message}`);
    }
  }

  private onChildExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null, startedAt: number): void {
    if (this.child !== child) return;
    this.child = undefined;
    for (const [id, waiter] of this.doctorWaiters) {
      waiter({ ok: false, report: '# Loopgate diagnosis\n\nThe proxy exited before the diagnosis finished.' });
      this.doctorWaiters.delete(id);
    }
    if (this.stopping) return;
    if (Date.now() - startedAt > STABLE_MS) this.crashes = 0;
    this.scheduleRestart(signal ? `signal ${signal}` : `exit code ${code}`);
  }

  /** Backoff restarts after a crash; a restart that fails during start-up counts as another crash. */
  private scheduleRestart(how: string): void {
    const delay = BACKOFF_MS[this.crashes];
    if (delay === undefined) {
      this.fail(`The proxy crashed ${this.crashes} times in a row (last: ${how}); not restarting. Start it again with Loopgate: Start Proxy.`);
      return;
    }
    this.crashes++;
    this.opts.log('warn', `The proxy exited unexpectedly (${how}); restarting in ${delay} ms.`);
    this.setState({ kind: 'failed', message: `The proxy exited (${how}); restarting`, retryInMs: delay });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.startOnce().then((s) => {
        // A configuration problem or a taken port will not cure itself: stop retrying and show it.
        if (s.kind === 'failed' && s.code !== 'config' && s.code !== 'EADDRINUSE' && s.code !== 'upstream-mismatch') this.scheduleRestart('failed to start');
      });
    }, delay);
  }

  private send(message: ToProxy): void {
    const child = this.child;
    if (child?.connected) child.send(message, (err) => err && this.opts.log('warn', `IPC send failed: ${err.message}`));
  }

  private clearRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private fail(message: string, code?: string): ProxyState {
    this.opts.log('error', message);
    return this.setState({ kind: 'failed', message, code });
  }

  private setState(state: ProxyState): ProxyState {
    if (state.kind === 'attached') this.watchAttached(state.url);
    else this.unwatchAttached();
    this.current = state;
    this.stateEmitter.fire(state);
    return state;
  }
}

function notOurs(port: number): string {
  return `Port ${port} is taken by something that is not this user's Loopgate proxy (it could not prove it knows the local token, so the token was not sent to it). Change loopgate.proxy.port, or stop that program.`;
}
