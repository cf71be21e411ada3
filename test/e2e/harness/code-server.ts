// Starts code-server (= VS Code 1.100.3 server) on a free loopback port with a
// fresh user-data-dir, for one test run. The e2e tests run the extension in
// real VS Code rather than a mocked API; VS Code itself cannot be downloaded
// here, so its server build comes from npm as code-server (README, "Tests in
// real VS Code (e2e)").
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { artifactName, codeServerTarget, logsDir, runTargets, type CodeServerTarget } from './paths.js';
import { pollUntil } from './poll.js';

export interface StartCodeServerOptions {
  /** Folder opened as the workspace. */
  workspace: string;
  /** The extension under development (its package.json folder); used by the page URL. */
  extensionDevelopmentPath?: string;
  /** Merged over the defaults into the fresh `User/settings.json`. */
  userSettings?: Record<string, unknown>;
  /** Extra environment for code-server and so for the extension host it starts. */
  env?: Record<string, string>;
  /** Label for the log file name. */
  label?: string;
  timeoutMs?: number;
  /** Which VS Code: `oldest` (1.100, the default) or `current` (the newest code-server). */
  target?: CodeServerTarget;
}

export interface CodeServer {
  url: string;
  port: number;
  workspace: string;
  extensionDevelopmentPath?: string;
  userDataDir: string;
  /** code-server's output; the browser helpers append the page console here too. */
  logFile: string;
  /** code-server's output so far (not the page console). */
  output(): string;
  /** Stops code-server and everything it started; removes the temporary dirs. */
  close(): Promise<void>;
}

const supervisor = join(__dirname, 'supervise.mjs');

export const DEFAULT_USER_SETTINGS: Readonly<Record<string, unknown>> = {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.enabled': false,
  'chat.disableAIFeatures': true,
};

// Names that look like credentials never reach code-server or the extension
// host; neither do variables that would redirect it (PORT overrides
// --bind-addr, VSCODE_* would make it talk to an outer VS Code).
const DROPPED_ENV = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|^PORT$|^VSCODE_|^ELECTRON_/i;

/** The environment a code-server child gets: ours minus credentials, plus `extra`. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!DROPPED_ENV.test(name)) env[name] = value;
  }
  // A gallery without serviceUrl disables the marketplace: no open-vsx.org queries.
  return { ...env, EXTENSIONS_GALLERY: '{}', ...extra };
}

export function assertProvisioned(target: CodeServerTarget): void {
  const t = codeServerTarget(target);
  if (!existsSync(t.entry) || !existsSync(t.marker) || !existsSync(t.node)) {
    throw new Error(
      `code-server (${target}) is not provisioned (${t.entry} missing). Run \`npm run provision:e2e\` ` +
        '(or `npm run test:e2e`, which provisions first).',
    );
  }
}

export async function startCodeServer(opts: StartCodeServerOptions): Promise<CodeServer> {
  // Unnamed: the first target of the run's tier (test/e2e/run.mjs).
  const name = opts.target ?? runTargets()[0]!;
  const target = codeServerTarget(name);
  assertProvisioned(name);
  const workspace = resolve(opts.workspace);
  if (!existsSync(workspace)) throw new Error(`workspace folder does not exist: ${workspace}`);

  const tmp = mkdtempSync(join(tmpdir(), 'loopgate-e2e-'));
  const userDataDir = join(tmp, 'user-data');
  const extensionsDir = join(tmp, 'extensions');
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  mkdirSync(extensionsDir);
  writeFileSync(
    join(userDataDir, 'User', 'settings.json'),
    JSON.stringify({ ...DEFAULT_USER_SETTINGS, ...opts.userSettings }, null, 2),
  );
  // An empty config file keeps code-server from writing ~/.config/code-server.
  const configFile = join(tmp, 'config.yaml');
  writeFileSync(configFile, '');
  mkdirSync(logsDir, { recursive: true });
  const logFile = join(logsDir, `${artifactName(opts.label ?? 'code-server')}.log`);
  writeFileSync(logFile, `# code-server for ${workspace}\n`);

  const child = spawn(
    process.execPath,
    [
      supervisor,
      '--cleanup',
      tmp,
      target.node,
      target.entry,
      '--auth',
      'none',
      '--bind-addr',
      '127.0.0.1:0',
      '--config',
      configFile,
      '--user-data-dir',
      userDataDir,
      '--extensions-dir',
      extensionsDir,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--disable-proxy',
      // Newer VS Code honours extensionDevelopmentPath/extensionTestsPath in the page's payload
      // only with the smoke-test driver on; code-server passes VS Code's own flag through.
      ...(name === 'current' ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
      workspace,
    ],
    // The supervisor stops code-server's whole process group when this pipe
    // closes, so a crashed or killed test run leaves no VS Code behind.
    { env: childEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let output = '';
  let exited: string | undefined;
  const onOutput = (chunk: Buffer) => {
    output += chunk.toString();
    appendFileSync(logFile, chunk);
  };
  child.stdout!.on('data', onOutput);
  child.stderr!.on('data', onOutput);
  const exitedPromise = new Promise<void>((r) => child.once('exit', () => r()));
  child.once('exit', (code, signal) => {
    exited = `code-server exited (code ${code}, signal ${signal})`;
  });
  child.once('error', (err) => {
    exited = `code-server failed to start: ${err.message}`;
  });
  child.stdin!.on('error', () => {}); // EPIPE once the supervisor is gone

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (!exited) {
      child.stdin!.end('close\n'); // orderly: we keep the logs and remove tmp ourselves
      const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exitedPromise;
      clearTimeout(forced);
    }
    // Keep VS Code's own logs (extension host, server) next to ours for debugging.
    const vscodeLogs = join(userDataDir, 'logs');
    if (existsSync(vscodeLogs)) cpSync(vscodeLogs, logFile.replace(/\.log$/, '-vscode-logs'), { recursive: true });
    rmSync(tmp, { recursive: true, force: true });
  };

  try {
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const port = await pollUntil(
      () => Number(/HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]),
      { timeoutMs, what: 'code-server to listen', abort: () => exited },
    );
    const url = `http://127.0.0.1:${port}`;
    await pollUntil(async () => (await fetch(`${url}/healthz`)).ok, {
      timeoutMs,
      what: `${url}/healthz`,
      abort: () => exited,
    });
    return {
      url,
      port,
      workspace,
      extensionDevelopmentPath: opts.extensionDevelopmentPath,
      userDataDir,
      logFile,
      close,
      output: () => output,
    };
  } catch (err) {
    await close();
    const tail = readFileSync(logFile, 'utf8').slice(-2000);
    throw new Error(`${(err as Error).message}\n--- code-server log (${logFile}) ---\n${tail}`);
  }
}
