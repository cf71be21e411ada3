// Issue 26 §2: `loopgate run` hands every tool the variables the common tools
// read for both protocols (one table, rules/project/client-env.ts), except what a
// given tool takes as a conflict. Real child processes: `node -e` with the
// official OpenAI and Anthropic SDKs configured from the environment alone,
// and fake `qwen`/`claude` executables (first on PATH) that print what they got.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, runCli, tempHome } from './io.js';
import { KEYS, startStack, TOKEN, type Stack } from '../proxy/stack.js';

/** `loopgate run` hands each tool a credential of its own run (rules/access/run-credential.ts), never the token. */
const RUN_CREDENTIAL = expect.stringMatching(/^lg-local-run_[a-z0-9-]+_[0-9a-z]+_[0-9a-z]+_[0-9a-f]{32}$/);

function runBuilt(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: process.cwd() });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}

/** Fake tools that print the variables they were started with. */
function fakeTools(): string {
  const dir = mkdtempSync(join(tmpdir(), 'loopgate-fake-tools-'));
  for (const name of ['qwen', 'claude']) {
    writeFileSync(join(dir, name), `#!${process.execPath}\nprocess.stdout.write(JSON.stringify(process.env));\n`);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

const TABLE = [
  'OPENAI_BASE_URL',
  'OPENAI_API_BASE',
  'OPENAI_API_KEY',
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_API_KEY',
];

describe('loopgate run: the client variables for every tool (issue 26 §2)', () => {
  let stack: Stack;
  let port: string;
  let user: NodeJS.ProcessEnv;
  beforeAll(async () => {
    // A key for each protocol family, as a user with an OpenAI group and a Claude group has.
    stack = await startStack({
      keys: [
        { name: 'openai', key: KEYS.default, named: true },
        { name: 'claude', key: KEYS.claude, named: true },
      ],
    });
    port = new URL(stack.proxy.url).port;
    // A user who never set ANTHROPIC_API_KEY (the Qwen Code failure: "ANTHROPIC_API_KEY environment variable not found").
    user = { PATH: `${fakeTools()}${delimiter}${process.env.PATH}`, LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN };
  });
  afterAll(async () => stack?.close());

  it('a tool with no rule of its own (qwen) gets every variable of the table', async () => {
    const r = await runBuilt(['run', '--port', port, '--', 'qwen', '--auth-type', 'anthropic'], user);
    expect(r.code, r.err).toBe(0);
    const env = JSON.parse(r.out) as Record<string, string>;
    expect(Object.fromEntries(TABLE.map((n) => [n, env[n]]))).toEqual({
      OPENAI_BASE_URL: `${stack.proxy.url}/v1`,
      OPENAI_API_BASE: `${stack.proxy.url}/v1`,
      OPENAI_API_KEY: RUN_CREDENTIAL,
      ANTHROPIC_BASE_URL: stack.proxy.url,
      ANTHROPIC_AUTH_TOKEN: RUN_CREDENTIAL,
      ANTHROPIC_API_KEY: RUN_CREDENTIAL,
    });
  });

  it('claude gets ANTHROPIC_AUTH_TOKEN alone (it warns when ANTHROPIC_API_KEY is set too), even when the user exported one', async () => {
    const r = await runBuilt(['run', '--port', port, '--', 'claude'], { ...user, ANTHROPIC_API_KEY: TOKEN });
    expect(r.code, r.err).toBe(0);
    const env = JSON.parse(r.out) as Record<string, string>;
    expect(env.ANTHROPIC_AUTH_TOKEN).toEqual(RUN_CREDENTIAL);
    expect('ANTHROPIC_API_KEY' in env).toBe(false);
    expect(env.OPENAI_API_KEY).toEqual(RUN_CREDENTIAL);
  });

  it('the official SDKs reach the proxy for both protocols from the environment, also as a tool that reads only ANTHROPIC_API_KEY', async () => {
    // The OpenAI SDK from its environment alone; the Anthropic SDK the way Qwen Code (anthropic) uses it:
    // ANTHROPIC_API_KEY or nothing. (With both Anthropic variables and no options, the SDK says once
    // on stderr that it uses ANTHROPIC_API_KEY: the same local token.)
    const script = `
      const OpenAI = require('openai').default; const Anthropic = require('@anthropic-ai/sdk').default;
      (async () => {
        const apiKey = process.env.ANTHROPIC_API_KEY;
        if (!apiKey) throw new Error('ANTHROPIC_API_KEY environment variable not found');
        const chat = await new OpenAI({ maxRetries: 0 }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'env only, openai' }] });
        const msg = await new Anthropic({ apiKey, authToken: null, maxRetries: 0 }).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 32, messages: [{ role: 'user', content: 'env only, anthropic' }] });
        process.stdout.write(JSON.stringify([chat.choices[0].message.content, msg.content[0].text]));
      })().catch((e) => { process.stderr.write(String(e)); process.exit(1); });`;
    const before = stack.sim.requests.length;
    const r = await runBuilt(['run', '--port', port, '--', process.execPath, '-e', script], user);
    expect(r.code, r.err).toBe(0);
    const [chat, msg] = JSON.parse(r.out) as string[];
    expect(chat).toContain('env only, openai');
    expect(msg).toContain('env only, anthropic');
    expect(stack.sim.requests.slice(before).map((q) => q.path)).toEqual(
      expect.arrayContaining(['/v1/chat/completions', '/v1/messages']),
    );
  });
});

describe('loopgate env: the same table', () => {
  it('prints every variable; --for claude leaves out ANTHROPIC_API_KEY', async () => {
    const all = await runCli(['env', '--port', '9999'], { LOOPGATE_TOKEN: 'lg-local-abc' });
    expect(all.out.split('\n').map((l) => /^export (\w+)=/.exec(l)?.[1])).toEqual(TABLE);
    const claude = await runCli(['env', '--port', '9999', '--for', 'claude'], { LOOPGATE_TOKEN: 'lg-local-abc' });
    expect(claude.out.split('\n').map((l) => /^export (\w+)=/.exec(l)?.[1])).toEqual(
      TABLE.filter((n) => n !== 'ANTHROPIC_API_KEY'),
    );
    expect(claude.out).toContain("export ANTHROPIC_AUTH_TOKEN='lg-local-abc'");
  });
});
