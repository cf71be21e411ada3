// A cloned project's cassette folders (issue 39 H-5, H-6, N2, N4, N8), through
// the CLI (in-process; the built CLI where a path is taken against its working
// folder, or a read could hang it) and the real file system: a link that carries `--record` or
// `show --save` out of the folder named is refused saying where it points; a
// link planted at a temporary name writes nothing; files are 0600; a replay
// reads regular files only (a link to /dev/zero, a folder, a pipe, an oversize
// file are each exit 3 naming the file); Loopgate's own refusals are never saved
// as the upstream's answer; the banner says what --record writes and where,
// and that a project's faults apply to every client.
import { execFile, execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { CLI, runCli, tempHome } from './io.js';
import { serve } from './serve-run.js';

const TOKEN = 'lg-local-cassette-folders-0123456789abcdef';

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'lg-folders-'));
}

/** The built CLI run to its end in `cwd`: its exit code and output. */
function cli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd, env: { PATH: process.env.PATH, LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN, ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

/**
 * `serve ARGS` in `cwd` that should refuse to start: its exit code and output. Should it start instead (the old
 * code did), `whenStarted` runs against it (a request, so what it would write is written), then it is stopped;
 * one that neither starts nor ends by the deadline (the old code reading /dev/zero) is killed.
 */
async function serveRefused(
  args: string[],
  cwd: string,
  whenStarted: (url: string) => Promise<unknown> = async () => undefined,
): Promise<{ code: number | string; out: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--no-log', ...args], {
    cwd,
    env: { PATH: process.env.PATH, LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const ended = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? `signal ${signal}`)),
  );
  const started = new Promise<string>((resolve) => {
    const on = (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), 20_000)));
  const first = await Promise.race([ended, started, deadline]);
  clearTimeout(timer);
  if (typeof first === 'string' && first.startsWith('http')) {
    await whenStarted(first).catch(() => undefined);
    child.kill('SIGTERM');
  } else if (first === 'deadline') {
    child.kill('SIGKILL');
    out += '\n(neither started nor ended within 20 s: killed)';
  }
  const code = await ended;
  return {
    code: first === 'deadline' ? 'hung' : typeof first === 'string' && first.startsWith('http') ? 'started' : code,
    out,
  };
}

function ask(url: string, text: string) {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: TOKEN, maxRetries: 0 }).chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: text }],
  });
}

/** `serve` in this process (serve-run.ts); the built CLI where a relative path is taken against its folder. */
const liveProxy = (args: string[] = [], where: { cwd?: string; built?: boolean } = {}) =>
  serve(args, { LOOPGATE_TOKEN: TOKEN }, where);

/** `show ID --save DIR` in this process: DIR absolute, so the working directory it would be taken against is not used. */
const save = (id: string, dir: string, url: string) =>
  runCli(['show', id, '--save', dir, '--proxy', url], { LOOPGATE_TOKEN: TOKEN });

/** A cloned project whose `cassettes/demo` is a link to a folder outside it (a shell's sourced folder, say). */
function clonedProject(): { project: string; outside: string } {
  const root = scratch();
  const project = join(root, 'project');
  const outside = join(root, 'outside-rc.d');
  mkdirSync(join(project, 'cassettes'), { recursive: true });
  mkdirSync(outside);
  symlinkSync(outside, join(project, 'cassettes', 'demo'));
  return { project, outside };
}

describe('cassette folders a cloned project lays out', () => {
  it('serve --record through a linked folder does not start: exit 3, saying which link points where; nothing lands outside', async () => {
    const { project, outside } = clonedProject();
    const r = await serveRefused(['--record', 'cassettes/demo'], project, (url) => ask(url, 'echo $(id)'));
    expect(readdirSync(outside)).toEqual([]);
    expect(r.code, r.out).toBe(3);
    expect(r.out).toContain(`cassettes/demo is a link to ${outside}`);
    expect(r.out).toMatch(/outside cassettes\/demo: Loopgate writes only inside the folder named/);
    expect(r.out).not.toContain(TOKEN);
    // A link on the way counts too (the folder named is under it), and so does an absolute path to it.
    const viaParent = clonedProject();
    symlinkSync(viaParent.outside, join(viaParent.project, 'linked'));
    const parent = await serveRefused(['--record', 'linked/deeper'], viaParent.project, (url) => ask(url, 'x'));
    expect(parent.code, parent.out).toBe(3);
    expect(parent.out).toContain(`linked is a link to ${viaParent.outside}`);
    expect(readdirSync(viaParent.outside)).toEqual([]);
  }, 90_000);

  it('serve --record writes 0600 files, and the banner says that it records and where', async () => {
    const project = scratch();
    const s = await liveProxy(['--record', 'cassettes/ok'], { cwd: project, built: true });
    try {
      await ask(s.url, 'record me');
      const deadline = Date.now() + 5000;
      const dir = join(project, 'cassettes', 'ok');
      while (
        !(existsSync(dir) && readdirSync(dir).some((f) => f.includes('chat-completions'))) &&
        Date.now() < deadline
      )
        await new Promise((r) => setTimeout(r, 20));
      const files = readdirSync(dir);
      expect(files.filter((f) => f.endsWith('.json')).length).toBeGreaterThan(0);
      for (const f of files) expect((statSync(join(dir, f)).mode & 0o777).toString(8), f).toBe('600');
      expect(files.some((f) => f.endsWith('.tmp'))).toBe(false);
      expect(await s.line(/recording/)).toContain(
        `  recording          every exchange the upstream answers into ${join(project, 'cassettes', 'ok')} (a file each, 0600)`,
      );
    } finally {
      await s.stop();
    }
  }, 90_000);

  it("the banner says a project file's faults apply to every client of the proxy", async () => {
    const project = scratch();
    writeFileSync(join(project, 'loopgate.json'), JSON.stringify({ faults: ['503 times=1 model=nothing-*'] }));
    const s = await liveProxy([], { cwd: project });
    try {
      expect(await s.line(/every client/)).toMatch(
        new RegExp(
          `note: ${join(project, 'loopgate.json').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} armed a fault rule: it applies to every client of this proxy, not only this project's \\(\`.*faults clear --port \\d+\` disarms\\)`,
        ),
      );
    } finally {
      await s.stop();
    }
  }, 90_000);

  it('show --save refuses a linked folder (relative or absolute), accepts a link above the folder named', async () => {
    const { project, outside } = clonedProject();
    const s = await liveProxy();
    try {
      const { response } = await new OpenAI({ baseURL: `${s.url}/v1`, apiKey: TOKEN, maxRetries: 0 }).chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'save me' }] })
        .withResponse();
      const id = response.headers.get('x-loopgate-request-id')!;
      const relative = await cli(['show', id, '--save', 'cassettes/demo', '--proxy', s.url], project);
      expect(relative.code, relative.out).toBe(1);
      expect(relative.out).toContain(`cassettes/demo is a link to ${outside}`);
      const absolute = await save(id, join(project, 'cassettes', 'demo'), s.url);
      expect(absolute.code, absolute.err).toBe(1);
      expect(absolute.err).toContain(`is a link to ${outside}`);
      expect(readdirSync(outside)).toEqual([]);
      // The user's own link above the folder they named (a /tmp that is a link) is theirs: it is written through.
      const mine = scratch();
      mkdirSync(join(mine, 'real'));
      symlinkSync(join(mine, 'real'), join(mine, 'alias'));
      const ok = await save(id, join(mine, 'alias', 'fixtures'), s.url);
      expect(ok.code, ok.err).toBe(0);
      expect(readdirSync(join(mine, 'real', 'fixtures'))).toHaveLength(1);
    } finally {
      await s.stop();
    }
  }, 90_000);

  it("show --save never saves Loopgate's own refusal as the upstream's answer", async () => {
    const s = await liveProxy();
    try {
      // A request Loopgate refused itself (no token: 401 missing-local-token) never reached the upstream.
      const refused = await fetch(`${s.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'no token' }] }),
      });
      expect(refused.status).toBe(401);
      const refusedId = refused.headers.get('x-loopgate-request-id')!;
      const into = join(scratch(), 'fixtures');
      const local = await save(refusedId, into, s.url);
      expect(local.code, local.err).toBe(1);
      expect(local.err).toMatch(
        /cannot be saved into a cassette: Loopgate answered this itself \(missing-local-token\)/,
      );
      expect(existsSync(into) ? readdirSync(into) : []).toEqual([]);
    } finally {
      await s.stop();
    }
  }, 90_000);

  it('a link planted at the temporary name writes nothing through it; the file saved is a 0600 regular file', async () => {
    const s = await liveProxy();
    try {
      const { response } = await new OpenAI({ baseURL: `${s.url}/v1`, apiKey: TOKEN, maxRetries: 0 }).chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'planted' }] })
        .withResponse();
      const id = response.headers.get('x-loopgate-request-id')!;
      const env = { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN };
      // The name the exchange gets, learnt from a first save elsewhere.
      const probe = join(scratch(), 'probe');
      expect((await runCli(['show', id, '--save', probe, '--proxy', s.url], env)).code).toBe(0);
      const name = readdirSync(probe)[0]!;
      // Every temporary name this process could use (the old code's was NAME.<pid>.tmp: this process's pid, since
      // runCli runs the CLI in it), each a link to a file of the user's.
      const dir = join(scratch(), 'cassette');
      mkdirSync(dir);
      const victim = join(scratch(), 'victim.sh');
      writeFileSync(victim, 'echo untouched\n');
      symlinkSync(victim, join(dir, `${name}.${process.pid}.tmp`));
      const saved = await runCli(['show', id, '--save', dir, '--proxy', s.url], env);
      expect(saved.code, saved.err).toBe(0);
      expect(readFileSync(victim, 'utf8')).toBe('echo untouched\n');
      const file = join(dir, name);
      expect(lstatSync(file).isFile()).toBe(true);
      expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    } finally {
      await s.stop();
    }
  }, 90_000);
});

describe('a hostile cassette folder on --replay', () => {
  /** A cassette with one good exchange (recorded by the real CLI), to which each case adds one bad entry. */
  async function recorded(): Promise<string> {
    const dir = join(scratch(), 'cassette');
    const s = await liveProxy(['--record', dir]);
    try {
      await ask(s.url, 'recorded');
      const deadline = Date.now() + 5000;
      while (!(existsSync(dir) && readdirSync(dir).some((f) => f.endsWith('.json'))) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
    } finally {
      await s.stop();
    }
    return dir;
  }

  it('a link to /dev/zero, a folder, a pipe or an oversize file named *.json: exit 3 naming the file and why', async () => {
    const good = await recorded();
    const cases: Array<{ name: string; make: (file: string) => void; why: RegExp }> = [
      {
        name: 'zero.json',
        make: (f) => symlinkSync('/dev/zero', f),
        why: /a link \(to \/dev\/zero\): a cassette is read from regular files only/,
      },
      { name: 'folder.json', make: (f) => mkdirSync(f), why: /a folder, not a cassette file/ },
      {
        name: 'pipe.json',
        make: (f) => execFileSync('mkfifo', [f]),
        why: /not a regular file \(a device, pipe or socket\)/,
      },
      {
        name: 'huge.json',
        make: (f) => {
          writeFileSync(f, '');
          truncateSync(f, 40 * 1024 * 1024);
        },
        why: /40 MiB, over the 32 MiB a cassette file may be/,
      },
      { name: 'broken.json', make: (f) => writeFileSync(f, '{"loopgate-cassette": '), why: /not JSON/ },
    ];
    const seen = [];
    for (const c of cases) {
      const dir = join(scratch(), 'cassette');
      execFileSync('cp', ['-r', good, dir]);
      c.make(join(dir, c.name));
      const r = await serveRefused(['--replay', dir, '--replay-speed', '0'], scratch());
      seen.push({
        name: c.name,
        code: r.code,
        namesTheFile: r.out.includes(join(dir, c.name)),
        saysWhy: c.why.test(r.out),
        internal: /internal error|at .*\.js:\d+/i.test(r.out),
        out: r.out,
      });
    }
    // All at once, so a failure shows every case.
    expect(
      seen.map(({ out: _out, ...rest }) => rest),
      seen.map((x) => `${x.name}: ${x.out}`).join('\n'),
    ).toEqual(cases.map((c) => ({ name: c.name, code: 3, namesTheFile: true, saysWhy: true, internal: false })));
  }, 180_000);
});
