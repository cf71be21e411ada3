// Demo mode serves the default models of the pinned Claude Code and Codex
// (scripts/provision-agents.mjs), so `loopgate run -- claude` / `-- codex` work in demo
// mode without a flag: the fixture lists the model, or one of its family that demo
// mode serves it as (rules/keys/demo-family.ts: Codex 0.171.0's gpt-6.2-sol as
// gpt-6.1-sol). The defaults are read from the installed clients
// themselves, not written down here: each binary is started against a small
// capture server that records the `model` of every request and refuses it
// (400, which neither retries), so a client update that changes its default
// to one of no demo family fails this test until the fixture lists the new model.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import defaultFixture from '../../simulator/default-fixture.json';
import { closestDemoModel } from '../../rules/keys/demo-family.js';
import { agentsSupported, claudeBinary, codexBinary } from '../agents/agent-binaries.js';

// As in test/agents: LOOPGATE_TEST_CLAUDE / LOOPGATE_TEST_CODEX check another build (a newer release installed elsewhere).
const supported = agentsSupported;
const CLAUDE = supported ? claudeBinary() : 'claude';
const CODEX = supported ? codexBinary() : 'codex';
const CAPTURE_KEY = 'capture-not-a-real-key';

interface Captured {
  path: string;
  model?: string;
}

let server: Server;
let origin: string;
const captured: Captured[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let model: string | undefined;
      try {
        const m = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: unknown }).model;
        if (typeof m === 'string') model = m;
      } catch {
        // not JSON: not a model request
      }
      captured.push({ path: req.url ?? '', model });
      // A plain refusal both clients give up on at once (no retry), in the shape each expects.
      const anthropic = (req.url ?? '').startsWith('/v1/messages');
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          anthropic
            ? { type: 'error', error: { type: 'invalid_request_error', message: 'capture only' } }
            : { error: { message: 'capture only', type: 'invalid_request_error', code: 'invalid_request' } },
        ),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function run(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const home = mkdtempSync(join(tmpdir(), 'loopgate-defaults-'));
  mkdirSync(join(home, '.codex'));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        CODEX_HOME: join(home, '.codex'),
        NO_COLOR: '1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** The models of the fixture's groups that speak `protocol`. */
function servedOn(protocol: string): string[] {
  return Object.values(defaultFixture.groups)
    .filter((g) => (g.protocols as string[]).includes(protocol))
    .flatMap((g) => g.models.map((m) => (typeof m === 'string' ? m : m.id)));
}

/** The models demo mode cannot serve on `protocol`: neither listed nor of a listed family. */
function unserved(models: string[], protocol: string): string[] {
  const listed = servedOn(protocol);
  return models.filter((m) => !listed.includes(m) && closestDemoModel(m, listed) === undefined);
}

function modelsSince(before: number, path: RegExp): string[] {
  return [
    ...new Set(
      captured
        .slice(before)
        .filter((c) => path.test(c.path) && c.model)
        .map((c) => c.model!),
    ),
  ];
}

describe.skipIf(!supported)("the demo fixture serves the pinned clients' default models", () => {
  it('Claude Code: every model it asks for by default is on a Messages group', async () => {
    expect(existsSync(CLAUDE)).toBe(true);
    const before = captured.length;
    const r = await run(CLAUDE, ['-p', 'hi'], {
      ANTHROPIC_BASE_URL: origin,
      ANTHROPIC_API_KEY: CAPTURE_KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    });
    const models = modelsSince(before, /^\/v1\/messages/);
    expect(models.length, `Claude Code sent no model request; its output:\n${r.out.slice(-2000)}`).toBeGreaterThan(0);
    const missing = unserved(models, 'messages');
    expect(
      missing,
      `the pinned Claude Code asks for ${missing.join(', ')}: add it to a Messages group of simulator/default-fixture.json`,
    ).toEqual([]);
  }, 90_000);

  it('Codex: the model it asks for by default is on a Responses group', async () => {
    expect(existsSync(CODEX)).toBe(true);
    const before = captured.length;
    const provider = `model_providers.capture={name="capture",base_url="${origin}/v1",env_key="CAPTURE_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0}`;
    const r = await run(
      CODEX,
      ['exec', '--skip-git-repo-check', '-c', 'model_provider=capture', '-c', provider, 'hi'],
      { CAPTURE_KEY },
    );
    const models = modelsSince(before, /^\/v1\/responses/);
    expect(models.length, `Codex sent no model request; its output:\n${r.out.slice(-2000)}`).toBeGreaterThan(0);
    const missing = unserved(models, 'responses');
    expect(
      missing,
      `the pinned Codex asks for ${missing.join(', ')}: add it to a Responses group of simulator/default-fixture.json`,
    ).toEqual([]);
  }, 90_000);
});
