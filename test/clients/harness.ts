// Wiring for the library-client matrix: one simulator (with canary keys), one real
// proxy per key group, and long-lived runner children (runner.mjs) that drive the
// client libraries in the Node each one needs.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defaultFixture } from '../../simulator/index.js';
import type { ProxyOptions } from '../../core/options.js';
import { makeCanary } from '../log/canary.js';
import { fixtureWithKeys, startKitStack, type KitStack } from '../kit/stack.js';

export const repoRoot = resolve(__dirname, '..', '..');

// ---------------------------------------------------------------- the stack

export type ProxyName = 'default' | 'claude' | 'chatOnly';
const GROUP: Record<ProxyName, string> = { default: 'default', claude: 'claude', chatOnly: 'chat-only' };

/**
 * Models the stack's relay lists beyond the demo fixture: the pinned agents'
 * current defaults (Codex 0.171.0 asks for gpt-6.2-sol), as a real relay lists a
 * model once it ships. This simulator is not in demo mode and never guesses a
 * model; demo mode's family fallback is tested in test/agents/demo-defaults.test.ts.
 */
const CURRENT_DEFAULTS: Record<string, string[]> = { default: ['gpt-6.2-sol'], 'chat-only': ['gpt-6.2-sol'] };

/** The kit's stack (test/kit/stack.ts); `keys` are the real (simulator) keys: canaries that must never be logged. */
export type ClientStack = KitStack<ProxyName>;

/** `opts` go to every proxy (a larger body cap, another ring size, ...), `perProxy(name)` to one (a cassette to record). */
export async function startClientStack(
  opts: Partial<ProxyOptions> = {},
  perProxy: (name: ProxyName) => Partial<ProxyOptions> = () => ({}),
): Promise<ClientStack> {
  // Fresh random keys and token per run, so the leak check looks for values nothing else contains.
  const keys: Record<ProxyName, string> = {
    default: makeCanary('sk-canary-default-'),
    claude: makeCanary('sk-canary-claude-'),
    chatOnly: makeCanary('sk-canary-chatonly-'),
  };
  const groups = Object.fromEntries(
    Object.entries(defaultFixture.groups).map(([name, g]) => [
      name,
      { ...g, models: [...g.models, ...(CURRENT_DEFAULTS[name] ?? []).map((id) => ({ id, owned_by: 'openai' }))] },
    ]),
  );
  const fixture = fixtureWithKeys(
    Object.fromEntries((Object.keys(keys) as ProxyName[]).map((p) => [keys[p], GROUP[p]])),
    groups,
  );
  return startKitStack({
    keys,
    token: makeCanary('lg-local-canary-'),
    fixture,
    // logBodies: a wider sink for the leak check.
    opts: { bridge: 'auto', logBodies: true, ...opts },
    perProxy,
  });
}

// ---------------------------------------------------------------- runtimes

export interface Runtime {
  name: 'node20' | 'node24';
  /** The Node binary the runner child uses. */
  node: string;
  /** load.mjs of the provisioned tree, or undefined for the repo's own node_modules. */
  loader?: string;
  /** node_modules folder the runtime's packages come from. */
  modules: string;
}

export const node20: Runtime = { name: 'node20', node: process.execPath, modules: join(repoRoot, 'node_modules') };

/**
 * The Node 24 tree of scripts/provision-clients.mjs (`npm test` provisions it; this runs it
 * too so `vitest run` alone works, ~instant when cached). Undefined where the
 * recipe has no Node binary (not linux-x64).
 */
export function provisionNode24(): Runtime | undefined {
  if (!(process.platform === 'linux' && process.arch === 'x64')) return undefined;
  execFileSync(process.execPath, [join(repoRoot, 'scripts', 'provision-clients.mjs')], {
    stdio: 'pipe',
    timeout: 10 * 60_000,
  });
  const manifest = JSON.parse(readFileSync(join(repoRoot, '.cache', 'clients', 'manifest.json'), 'utf8')) as {
    node: string;
    dir: string;
  };
  if (!existsSync(manifest.node)) throw new Error(`provisioned Node missing: ${manifest.node}`);
  return {
    name: 'node24',
    node: manifest.node,
    loader: pathToFileURL(join(manifest.dir, 'load.mjs')).href,
    modules: join(manifest.dir, 'node_modules'),
  };
}

/** The installed version of a package (or npm alias folder) in a runtime's tree. */
export function installedVersion(rt: Runtime, name: string): string {
  return (JSON.parse(readFileSync(join(rt.modules, name, 'package.json'), 'utf8')) as { version: string }).version;
}

// ---------------------------------------------------------------- runner children

export interface SeenRequest {
  method: string;
  url: string;
  status: number;
  rewrite: string | null;
  bridge: string | null;
  contentType: string | null;
}

export interface CaseResult {
  text: string;
  chunks?: number;
  toolCalls?: Array<{ name: string; args: Record<string, unknown> }>;
  sawDone?: boolean;
  requests: SeenRequest[];
  external: string[];
}

export interface CaseEnv {
  proxies: Record<ProxyName, string>;
  token: string;
  model: string;
  prompt: string;
  timeoutMs: number;
  proxyKey?: ProxyName;
}

export class CaseFailed extends Error {
  constructor(
    message: string,
    readonly requests: SeenRequest[],
    readonly external: string[],
  ) {
    super(message);
  }
}

export interface Runner {
  node: string;
  run(client: string, caseName: string, env: CaseEnv): Promise<CaseResult>;
  close(): void;
}

type Reply =
  | { id: number; ok: true; result: CaseResult }
  | { id: number; ok: false; error: string; requests: SeenRequest[]; external: string[] };

export async function startRunner(rt: Runtime, startTimeoutMs = 15_000): Promise<Runner> {
  // A clean environment: no provider keys or proxies of the host leak into the clients.
  const home = mkdtempSync(join(tmpdir(), 'loopgate-clients-home-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: tmpdir(),
    OPENAI_AGENTS_DISABLE_TRACING: '1',
    LANGCHAIN_TRACING_V2: 'false',
  };
  if (rt.loader) env.LOOPGATE_CLIENTS_LOADER = rt.loader;
  const child: ChildProcess = fork(join(repoRoot, 'test', 'clients', 'runner.mjs'), [], {
    execPath: rt.node,
    execArgv: [],
    env,
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  child.stdout!.on('data', () => {});
  const pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    exited = `runner (${rt.name}) exited code=${code} signal=${signal}; stderr: ${stderr}`;
    for (const p of pending.values()) p.reject(new Error(exited));
    pending.clear();
  });
  const node = await new Promise<string>((resolveReady, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`runner (${rt.name}) not ready within ${startTimeoutMs} ms; stderr: ${stderr}`)),
      startTimeoutMs,
    );
    child.once('message', (m: { ready?: boolean; node?: string }) => {
      clearTimeout(timer);
      if (m.ready) resolveReady(m.node!);
      else reject(new Error(`unexpected first message ${JSON.stringify(m)}`));
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(exited));
    });
  });
  child.on('message', (m: Reply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    p.resolve(m);
  });
  let next = 0;
  return {
    node,
    async run(client, caseName, caseEnv) {
      if (exited) throw new Error(exited);
      const id = ++next;
      const reply = await new Promise<Reply>((resolveRun, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(
            new Error(
              `${client}/${caseName}: no answer within ${caseEnv.timeoutMs + 2000} ms; runner stderr: ${stderr}`,
            ),
          );
        }, caseEnv.timeoutMs + 2000);
        pending.set(id, {
          resolve: (r) => {
            clearTimeout(timer);
            resolveRun(r);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
        child.send({ id, client, caseName, env: caseEnv });
      });
      if (!reply.ok)
        throw new CaseFailed(
          `${client}/${caseName} failed in the client:\n${reply.error}`,
          reply.requests,
          reply.external,
        );
      return reply.result;
    },
    close() {
      if (!exited && child.pid) child.kill('SIGTERM');
      rmSync(home, { recursive: true, force: true });
    },
  };
}
