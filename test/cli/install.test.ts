// The CLI as a command: the package `npm pack` makes holds the built CLI (not
// the sources), installs with no registry, and what it prints runs from any
// directory, in a shell whose PATH has nothing of the checkout.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempHome } from './io.js';

const repoRoot = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function npmRun(args: string[], cwd: string): string {
  // --offline: nothing here may need the registry.
  return execFileSync(npm, [...args, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_prefix: undefined },
  });
}

describe('the CLI installed as a command', () => {
  const work = mkdtempSync(join(tmpdir(), 'loopgate-install-'));
  const prefix = join(work, 'global');
  const elsewhere = mkdtempSync(join(tmpdir(), 'loopgate-elsewhere-'));
  // node, curl and the installed command; nothing of the checkout.
  const env = () => ({
    PATH: [join(prefix, 'bin'), dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter),
    LOOPGATE_HOME: home,
  });
  const home = tempHome();
  let tarball = '';

  let installWarnings = '';

  beforeAll(() => {
    // dist/ is built by the test run's global setup (and by `npm pack`'s prepack); --ignore-scripts so
    // this test does not rebuild it under the other tests' feet.
    const packed = JSON.parse(
      npmRun(['pack', '--ignore-scripts', '--json', '--pack-destination', work], repoRoot),
    ) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = join(work, packed[0]!.filename);
    files = packed[0]!.files.map((f) => f.path).sort();
    // At warn level, as a user sees it.
    const install = spawnSync(
      npm,
      ['install', '-g', '--prefix', prefix, tarball, '--offline', '--no-audit', '--no-fund', '--loglevel=warn'],
      {
        cwd: work,
        encoding: 'utf8',
        env: { ...process.env, npm_config_prefix: undefined },
      },
    );
    if (install.status !== 0) throw new Error(`npm install -g exited ${install.status}: ${install.stderr}`);
    installWarnings = install.stderr;
  }, 120_000);
  let files: string[] = [];

  it('installs without an install-script warning: the package has no script npm would run at install (npm 11 lists a `prepare` of a tarball)', () => {
    expect(installWarnings).not.toMatch(/install-scripts|allowScripts|prepare/);
  });

  it('the package holds the built CLI, the manifest, README and LICENSE: no sources, no tests, no extension', () => {
    expect(files).toEqual([
      'LICENSE',
      'README.md',
      'dist/cli.js',
      'dist/otlp-worker.js',
      'dist/tokenizer-worker.js',
      'package.json',
    ]);
  });

  it('runs from another directory as `loopgate`', () => {
    const out = execFileSync('bash', ['-c', 'loopgate --version && loopgate env'], {
      cwd: elsewhere,
      env: env(),
      encoding: 'utf8',
    });
    expect(out.split('\n')[0]).toBe(pkg.version);
    expect(out).toContain("export OPENAI_BASE_URL='http://127.0.0.1:8787/v1'");
  });

  let serve: ReturnType<typeof spawn> | undefined;
  afterAll(async () => {
    if (serve && serve.exitCode === null) {
      serve.kill('SIGTERM');
      await new Promise((r) => serve!.once('exit', r));
    }
  });

  it('serve prints `loopgate …` commands, and its curl line works in that shell', async () => {
    serve = spawn('loopgate', ['serve', '--port', '0', '--no-log'], {
      cwd: elsewhere,
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    const curl = await new Promise<string>((resolve, reject) => {
      serve!.stdout!.on('data', (c: Buffer) => {
        text += c.toString();
        const m = /^\s+(curl -s .*)$/m.exec(text);
        if (m) resolve(m[1]!);
      });
      serve!.once('exit', (code) => reject(new Error(`serve exited ${code}: ${text}`)));
    });
    expect(text).toMatch(/the local token: `loopgate token`, or eval "\$\(loopgate env --port \d+\)"/);
    expect(text).not.toMatch(/^\s+command\s/m); // no install hint: it is installed
    expect(curl).toContain('$(loopgate token)');
    const out = execFileSync('bash', ['-c', curl], { cwd: elsewhere, env: env(), encoding: 'utf8' });
    expect(JSON.parse(out).data.length).toBeGreaterThan(0);
    // The proxy's 401 names the command as the banner does for this install.
    const denied = await fetch(/curl -s (\S+)/.exec(curl)![1]!);
    expect(((await denied.json()) as { error: { message: string } }).error.message).toMatch(
      /run `loopgate token` \(or `eval "\$\(loopgate env --port \d+\)"`\)/,
    );
  });

  it('`npm install -g <checkout>` (the README line) installs it as well', () => {
    const linked = join(work, 'linked');
    // --ignore-scripts: a linked folder would otherwise run the checkout's lifecycle scripts here.
    npmRun(['install', '-g', '--ignore-scripts', '--prefix', linked, repoRoot], work);
    const out = execFileSync(join(linked, 'bin', 'loopgate'), ['--version'], { cwd: elsewhere, encoding: 'utf8' });
    expect(out.trim()).toBe(pkg.version);
  }, 60_000);
});
