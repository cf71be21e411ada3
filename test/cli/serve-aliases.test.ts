// `loopgate serve --alias` and loopgate.json, as a user runs them: the built
// CLI in a child process started in a sub-folder of a project, in front of the
// embedded simulator; bad values refused with what to fix.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, exited, runCli, tempHome } from './io.js';

/** The built CLI started in `cwd`; resolves with its output once `ready` matches a line, or when it exits. */
function serveIn(
  cwd: string,
  args: string[],
  ready: RegExp,
  env: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; lines: string[]; code?: number | null }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--no-log', ...args], {
    cwd,
    env: { PATH: process.env.PATH, LOOPGATE_HOME: tempHome(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  return new Promise((resolve) => {
    const take = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        lines.push(line);
        if (ready.test(line)) resolve({ child, lines });
      }
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    child.once('exit', (code) => resolve({ child, lines, code }));
  });
}

/** A project with loopgate.json at its root, and a folder two levels down to start in. */
function project(fileText: string): { root: string; deep: string } {
  const root = mkdtempSync(join(tmpdir(), 'loopgate-project-'));
  writeFileSync(join(root, 'loopgate.json'), fileText);
  const deep = join(root, 'src', 'app');
  mkdirSync(deep, { recursive: true });
  return { root, deep };
}

let running: ChildProcess | undefined;
afterEach(async () => {
  if (running && running.exitCode === null) {
    running.kill('SIGTERM');
    await exited(running);
  }
  running = undefined;
});

describe('loopgate serve: model aliases', () => {
  it('finds loopgate.json from the working directory upward, and --alias wins for the same model', async () => {
    const { root, deep } = project(
      JSON.stringify({ aliases: { 'gpt-6.2-sol': 'gpt-4.1', 'claude-opus-9': 'claude-sonnet-4-6' } }, null, 2),
    );
    const { child, lines } = await serveIn(deep, ['--no-token', '--alias', 'gpt-6.2-sol=gpt-6.1-sol'], /curl -s/);
    running = child;
    const text = lines.join('\n');
    expect(text).toMatch(/alias\s+gpt-6\.2-sol -> gpt-6\.1-sol \(--alias\)/);
    expect(text).toMatch(/alias\s+claude-opus-9 -> claude-sonnet-4-6 \(loopgate\.json\)/);
    expect(text).toContain(`project file       ${join(root, 'loopgate.json')}`);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)![1]!;
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'any', maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-6.2-sol', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.model).toBe('gpt-6.1-sol');
    expect(response.headers.get('x-loopgate-alias')).toBe('gpt-6.2-sol -> gpt-6.1-sol');
  });

  it('warns once the lists are known when an alias points at a model no key lists', async () => {
    const { child, lines } = await serveIn(
      tmpdir(),
      ['--alias', 'gpt-6.2-sol=gpt-6.1-sool'],
      /hint: alias gpt-6\.2-sol/,
    );
    running = child;
    expect(lines.join('\n')).toContain(
      'hint: alias gpt-6.2-sol -> gpt-6.1-sool (--alias): no key lists "gpt-6.1-sool"; closest: "gpt-6.1-sol"',
    );
  });

  it('refuses a loopgate.json that is not valid JSON (exit 3), naming the file and the place', async () => {
    const { root, deep } = project('{\n  "aliases": { "gpt-6.2-sol": "gpt-6.1-sol", }\n}\n');
    const r = await serveIn(deep, [], /listening on/);
    running = r.child;
    expect(r.code).toBe(3);
    expect(r.lines.join('\n')).toContain(
      `loopgate serve: ${join(root, 'loopgate.json')}: loopgate.json is not valid JSON: expected a property name in double quotes (line 2, column`,
    );
  });

  it('refuses an alias chain across loopgate.json and --alias (exit 3), saying the line to write', async () => {
    const { deep } = project(JSON.stringify({ aliases: { 'gpt-6.1-sol': 'gpt-4.1' } }));
    const r = await serveIn(deep, ['--alias', 'gpt-6.2-sol=gpt-6.1-sol'], /listening on/);
    running = r.child;
    expect(r.code).toBe(3);
    expect(r.lines.join('\n')).toContain('aliases do not chain: write gpt-6.2-sol=gpt-4.1 if that is what you mean');
  });

  it.each([
    [['--alias', 'gpt-6.2-sol'], '--alias takes FROM=TO'],
    [['--alias', '=gpt-6.1-sol'], 'an alias needs a model on both sides of "="'],
    [['--alias', 'gpt-6.1-sol='], 'an alias needs a model on both sides of "="'],
    [['--alias', 'gpt-6.1-sol=gpt-6.1-sol'], 'maps a model to itself'],
    [['--alias', 'my model=gpt-6.1-sol'], 'is not a model ID'],
    [['--alias', 'a=gpt-4.1', '--alias', 'a=gpt-6.1-sol'], '"a" is aliased twice'],
    [['--alias', 'a=b', '--alias', 'b=c'], 'aliases do not chain: write a=c if that is what you mean'],
    [['--alias', 'a=b', '--alias', 'b=a'], 'the two map onto each other; keep one'],
  ])('refuses %j with exit 2 and what to fix', async (args, message) => {
    const r = await runCli(['serve', '--port', '0', '--no-log', ...args]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.err).toContain('Usage: loopgate serve');
  });
});
