// Every fenced block in README.md runs as pasted after the README's own setup (`npm ci && npm start`:
// the proxy in front of the embedded simulator on 127.0.0.1:8787), or is marked here with the reason
// it cannot. sh blocks go through bash line by line with `loopgate` on PATH (the built dist/cli.js),
// and the agents the README names (`claude`, `codex`) from the provisioned tree; ts blocks are
// bundled by esbuild with the real openai SDK and run by node in the environment `loopgate env`
// exports. All of it runs in a network namespace of its own (test/docs/readme-runner.mjs) so the
// README's port is free; where one cannot be made (not root, no `unshare`), the running is skipped
// and says so. The checks that need no proxy (every block accounted for, every variable a ts block
// reads is one `loopgate env` sets) run everywhere. docs/faults.md's sh blocks run the same way (below).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { CLIENT_VARS } from '../../rules/project/client-env.js';
import { agentsSupported, claudeBinary, codexBinary } from '../agents/agent-binaries.js';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'cli.js');

interface Block {
  lang: string;
  lines: string[];
}

/** The fenced blocks, a block inside a list item too (its fence indented, its lines by as much). */
export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let open: (Block & { indent: number }) | undefined;
  for (const line of markdown.split('\n')) {
    const fence = /^( {0,3})```(\S*)\s*$/.exec(line);
    if (fence && !open) open = { lang: fence[2]!, lines: [], indent: fence[1]!.length };
    else if (fence && open) {
      blocks.push({ lang: open.lang, lines: open.lines });
      open = undefined;
    } else open?.lines.push(line.replace(new RegExp(`^ {0,${open.indent}}`), ''));
  }
  return blocks;
}

/**
 * The lines that are not run as pasted, each with its reason, by a part of the line. A README line
 * that matches none is run; one of these that no README line matches fails the test (a stale mark).
 */
const NOT_RUN: Array<{ line: string; reason: string }> = [
  {
    line: 'npm ci && npm start',
    reason:
      "the README's setup itself: the runner starts that proxy (serve from the built dist/, as npm start does after its build)",
  },
  { line: 'npm ci && npm test', reason: 'the whole test suite, which contains this test' },
  {
    line: 'export LOOPGATE_UPSTREAM=https://api.example.com/v1',
    reason: 'against the real service: no network to it here',
  },
  { line: 'read -rs LOOPGATE_API_KEY', reason: 'against the real service: reads a real key from the terminal' },
  {
    line: 'loopgate doctor          # walks',
    reason:
      'against the real service (LOOPGATE_UPSTREAM above); the same command against the simulator is run in test/cli',
  },
  { line: 'loopgate serve', reason: 'against the real service; the setup above is the same serve in demo mode' },
];

/**
 * The first tier (`npm test`) does not install the agent CLIs: `npm run test:live` runs this file again with them
 * (vitest.live.config.ts sets LOOPGATE_TEST_TIER=live), and only there are the agent lines run.
 */
const LIVE_TIER = process.env.LOOPGATE_TEST_TIER === 'live';
const AGENT_LINES: Array<{ line: string; reason: string }> = [
  { line: 'loopgate run -- claude', reason: 'the real Claude Code: run by the live tier (npm run test:live)' },
  { line: 'loopgate run -- codex', reason: 'the real Codex: run by the live tier (npm run test:live)' },
];
const notRun = LIVE_TIER ? NOT_RUN : [...NOT_RUN, ...AGENT_LINES];

// `loopgate run -- claude -p "hello"` and `codex exec "hello"` run as pasted: the agents from the provisioned
// tree, Codex in a git repository (the user's project). Codex asks for its default model: it depends on the demo
// keys serving it (the demo-mode model defaults, another change of issue 31), and it does today.

/** Lines run with a change that is said here: a placeholder replaced, a command that follows until Ctrl+C. */
const ADAPTED: Array<{ line: string; how: string; requestId?: string; follow?: string }> = [
  {
    line: 'loopgate show 66382237 --wire',
    how: "66382237 is an example ID: replaced with a request's of this run",
    requestId: '66382237',
  },
  {
    line: 'loopgate replay 66382237',
    how: "66382237 is an example ID: replaced with a request's of this run",
    requestId: '66382237',
  },
  {
    line: 'loopgate tail --errors',
    how: 'it follows until Ctrl+C: a failing request is sent until it shows, then SIGINT',
    follow: 'no-such-model-for-the-readme',
  },
  {
    line: 'loopgate run -- python my_script.py',
    how: "my_script.py is the user's own script: the runner writes one that prints the base URL it was given",
  },
];

/** The plain block after the Quick start: the banner, which is output, compared with the real one. */
const BANNER_LABELS = [
  'upstream site_url',
  'upstream base_url',
  'OpenAI clients',
  'Anthropic clients',
  'API key for tools',
  'keys',
  'traffic log',
  'live traffic',
  'Try it:',
];

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const blocks = fencedBlocks(readme);

function commandLines(block: Block): string[] {
  return block.lines.filter((l) => l.trim() && !l.trim().startsWith('#'));
}

function canMakeNetns(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  return spawnSync('unshare', ['--net', 'ip', 'link', 'set', 'lo', 'up'], { stdio: 'ignore' }).status === 0;
}

interface RunnerResult {
  id: string;
  code: number | string;
  out: string;
  err: string;
}

/** A fresh user: a temporary project folder, an empty HOME, and `loopgate` (the built dist/cli.js) on PATH. */
function sandboxUser(prefix: string): { dir: string; bin: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const bin = join(dir, 'bin');
  const home = join(dir, 'home');
  mkdirSync(bin);
  mkdirSync(home);
  writeFileSync(
    join(bin, 'loopgate'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`,
    {
      mode: 0o755,
    },
  );
  return { dir, bin, env: { PATH: `${bin}:${process.env.PATH}`, HOME: home, LOOPGATE_HOME: join(home, '.loopgate') } };
}

/** Runs the steps through readme-runner.mjs in a network namespace of its own (the README's port is free there). */
function runInNetns(
  user: { dir: string; env: Record<string, string> },
  steps: Array<{ id: string; command: string }>,
  timeoutMs: number,
): { banner: string; results: RunnerResult[] } {
  const planFile = join(user.dir, 'plan.json');
  writeFileSync(planFile, JSON.stringify({ cli: CLI, env: user.env, cwd: user.dir, steps }));
  const stdout = execFileSync('unshare', ['--net', process.execPath, join(__dirname, 'readme-runner.mjs'), planFile], {
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as { banner: string; results: RunnerResult[] };
}

describe('README code blocks', () => {
  it('every block is sh, ts or the banner; every line not run is marked with its reason, and no mark is stale', () => {
    expect(blocks.map((b) => b.lang).every((l) => ['sh', 'ts', ''].includes(l))).toBe(true);
    const shLines = blocks.filter((b) => b.lang === 'sh').flatMap(commandLines);
    for (const mark of [...notRun, ...ADAPTED])
      expect(
        shLines.some((l) => l.includes(mark.line)),
        `stale mark: ${mark.line}`,
      ).toBe(true);
    for (const b of blocks.filter((x) => x.lang === '')) expect(b.lines[0]).toMatch(/^Loopgate proxy listening on /);
  });

  it("a ts block reads only variables that `loopgate env` and `loopgate run` set (not LOOPGATE_TOKEN, which works only by the SDK's fallback)", () => {
    const set = new Set(CLIENT_VARS.map((v) => v.name));
    const ts = blocks.filter((b) => b.lang === 'ts');
    expect(ts.length).toBeGreaterThan(0);
    for (const b of ts) {
      const read = [...b.lines.join('\n').matchAll(/process\.env\.([A-Z_]+)/g)].map((m) => m[1]!);
      for (const name of read) expect(set.has(name), `${name} is not set by loopgate env`).toBe(true);
    }
  });

  it.runIf(canMakeNetns())(
    'every other line runs as pasted against the proxy on 127.0.0.1:8787',
    () => {
      const user = sandboxUser('loopgate-readme-');
      const { dir, bin } = user;
      if (LIVE_TIER && agentsSupported) {
        symlinkSync(claudeBinary(), join(bin, 'claude'));
        symlinkSync(codexBinary(), join(bin, 'codex'));
      }
      // The user's project: Codex works only inside a git repository (or with --skip-git-repo-check).
      execFileSync('git', ['init', '-q', dir]);
      writeFileSync(join(dir, 'my_script.py'), 'import os\nprint("my_script", os.environ["OPENAI_BASE_URL"])\n');
      const steps: Array<{ id: string; command: string; requestId?: string; follow?: string; timeoutMs?: number }> = [];
      blocks.forEach((b, i) => {
        if (b.lang === 'sh') {
          commandLines(b).forEach((line, j) => {
            if (notRun.some((m) => line.includes(m.line))) return;
            const adapted = ADAPTED.find((m) => line.includes(m.line));
            steps.push({
              id: `${i}.${j} ${line}`,
              command: line,
              requestId: adapted?.requestId,
              follow: adapted?.follow,
              timeoutMs: 180_000,
            });
          });
        } else if (b.lang === 'ts') {
          const out = join(dir, `block-${i}.mjs`);
          buildSync({
            stdin: { contents: b.lines.join('\n'), loader: 'ts', resolveDir: REPO },
            bundle: true,
            platform: 'node',
            format: 'esm',
            outfile: out,
            logLevel: 'silent',
          });
          steps.push({
            id: `${i} ts`,
            command: `eval "$(loopgate env)" && ${JSON.stringify(process.execPath)} ${JSON.stringify(out)}`,
          });
        }
      });
      const { banner, results } = runInNetns(user, steps, 600_000);
      for (const label of BANNER_LABELS) expect(banner).toContain(label);
      expect(results.map((r) => r.id)).toEqual(steps.map((s) => s.id));
      const failed = results
        .filter((r) => r.code !== 0)
        .map((r) => `${r.id}: exit ${r.code}\n${r.out.slice(-1500)}\n${r.err.slice(-1500)}`);
      expect(failed).toEqual([]);
      const byLine = (part: string) => results.find((r) => r.id.includes(part))!;
      expect(byLine('python my_script.py').out).toContain('my_script http://127.0.0.1:8787/v1');
      expect(byLine(' ts').out).toContain('gpt-4o-mini');
      expect(byLine('loopgate tail --errors').out).toContain('no-such-model-for-the-readme');
    },
    600_000,
  );
});

/**
 * docs/faults.md's blocks (issue 39 N1: its arming curl sent a form content type and got 415, and nothing ran it).
 * An sh block runs whole, in one bash (its lines share variables: `T=$(loopgate token)`), against the same setup
 * as the README's; a block marked here is not run, with the reason. A curl exits 0 on an HTTP error, so what a
 * block prints is checked too: no error envelope.
 */
const FAULTS_NOT_RUN: Array<{ first: string; reason: string }> = [
  {
    first: "loopgate serve --fault '429 times=2 retry-after=2'",
    reason: 'each line starts a proxy of its own until Ctrl+C; the --fault grammar is run in test/proxy/faults.test.ts',
  },
  {
    first: "loopgate serve --fault '429 times=1 retry-after=2 path=/v1/messages' &",
    reason: 'Claude Code against the real agent: test/agents/fault-report.test.ts runs it against the pinned binary',
  },
];

describe('docs/faults.md code blocks', () => {
  const page = fencedBlocks(readFileSync(join(REPO, 'docs', 'faults.md'), 'utf8'));
  const shBlocks = page.filter((b) => b.lang === 'sh');
  const marked = (b: Block) => FAULTS_NOT_RUN.find((m) => commandLines(b)[0]?.startsWith(m.first));

  it('every sh block is run or marked with its reason, no mark is stale, and the json block is JSON', () => {
    for (const mark of FAULTS_NOT_RUN)
      expect(
        shBlocks.some((b) => commandLines(b)[0]?.startsWith(mark.first)),
        `stale mark: ${mark.first}`,
      ).toBe(true);
    expect(shBlocks.filter((b) => !marked(b)).length).toBeGreaterThan(0);
    for (const b of page.filter((x) => x.lang === 'json')) expect(() => JSON.parse(b.lines.join('\n'))).not.toThrow();
  });

  it.runIf(canMakeNetns())(
    'every sh block not marked runs as pasted against the proxy on 127.0.0.1:8787, and no answer is an error',
    () => {
      const user = sandboxUser('loopgate-faults-doc-');
      const steps = shBlocks
        .filter((b) => !marked(b))
        .map((b, i) => ({ id: `faults.md sh ${i}`, command: b.lines.join('\n') }));
      const { results } = runInNetns(user, steps, 300_000);
      expect(results.map((r) => r.id)).toEqual(steps.map((s) => s.id));
      for (const r of results) {
        expect(r.code, `${r.id}\n${r.out}\n${r.err}`).toBe(0);
        expect(r.out, r.id).not.toMatch(/"error"\s*:/);
      }
      // The arming block: armed, listed, disarmed one and all.
      const arming = results.find((r) => r.out.includes('"armed"'));
      expect(arming?.out).toMatch(/"armed":\{"id":1,/);
    },
    300_000,
  );
});
