// Issue 39 H-7: a finite but huge number makes a cost Infinity (stored as null).
// Two ways in, each through the CLI's `serve` (in-process) as a user runs it: a cloned
// project's loopgate.json prices a model at 1.7e308 USD per million tokens, or
// the upstream reports 1.7e308 tokens. Either way `loopgate sessions`, `show`
// and `usage` (the real commands) stay up and say "no price" with the reason,
// never $0.0000, Infinity, NaN or null.
import { createServer as createHttpServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultLogFile } from '../../storage/config/dirs.js';
import { KEYS, logRecords, until } from '../proxy/stack.js';
import { freePort, runCli, startCli, tempHome, type StartedCli } from './io.js';

const HUGE = 1.7e308;
const SESSION = 'c3c3c3c3-0000-4000-8000-00000000000c';

/** An upstream that answers every chat completion with 1.7e308 tokens each way. */
async function hugeUsageUpstream(): Promise<{ server: Server; url: string }> {
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.includes('/models')) {
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', owned_by: 'x' }] }));
        return;
      }
      res.end(
        `{"id":"chatcmpl-huge","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":${HUGE},"completion_tokens":${HUGE},"total_tokens":${HUGE}}}`,
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

const serves: StartedCli[] = [];
const servers: Server[] = [];
afterAll(async () => {
  for (const s of serves) await s.stop();
  for (const s of servers) await new Promise((r) => s.close(r));
});

/** `serve` in `cwd` on a free port with its own home; two turns of one session; the env the commands need. */
async function twoTurns(
  cwd: string,
  upstream: string[],
): Promise<{ env: NodeJS.ProcessEnv; port: number; ids: string[] }> {
  const home = tempHome();
  const port = await freePort();
  const env = { LOOPGATE_HOME: home };
  const token = (await runCli(['token'], env)).out;
  const started = await startCli(
    ['serve', '--port', String(port), ...upstream],
    { LOOPGATE_HOME: home, LOOPGATE_API_KEY: KEYS.default },
    /^\s+curl -s (\S+)/,
    { cwd },
  );
  serves.push(started);
  const client = new OpenAI({
    baseURL: `http://127.0.0.1:${port}/v1`,
    apiKey: token,
    maxRetries: 0,
    defaultHeaders: { originator: 'codex_cli_rs', session_id: SESSION },
  });
  const ids: string[] = [];
  for (const content of ['first', 'second']) {
    const r = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })
      .withResponse();
    ids.push(r.response.headers.get('x-loopgate-request-id')!);
  }
  const log = defaultLogFile(env, port);
  await until(() => ids.every((id) => logRecords(log).some((r) => r.id === id)), 5000, 'the log');
  return { env, port, ids };
}

/** Every command that shows a cost, run for real: none fails, none shows a made-up figure, each says why. */
async function expectNoPriceEverywhere(
  env: NodeJS.ProcessEnv,
  port: number,
  id: string,
  why: RegExp,
): Promise<{ show: string }> {
  const at = ['--port', String(port)];
  const results = {
    sessions: await runCli(['sessions', ...at], env),
    sessionsJson: await runCli(['sessions', '--json', ...at], env),
    show: await runCli(['show', id, ...at], env),
    usage: await runCli(['usage', '--by', 'session', ...at], env),
    usageJson: await runCli(['usage', '--by', 'session', '--json', ...at], env),
  };
  for (const [name, r] of Object.entries(results)) {
    expect(r.code, `${name}: ${r.err}`).toBe(0);
    expect(r.out, name).not.toMatch(/Infinity|NaN|\$0\.0000|"estimated":null/);
  }
  expect(results.sessions.out).toMatch(/^codex\s+c3c3c3c3\s.*no price/m);
  const listed = results.sessionsJson.out
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; cost: unknown; costNote?: string })
    .find((s) => s.id === `codex:${SESSION}`)!;
  expect(listed.cost).toBeNull();
  expect(listed.costNote).toMatch(why);
  expect(results.show.out).toMatch(/^ {2}cost\s+no price \(.+\)$/m);
  expect(results.show.out).toMatch(why);
  expect(results.usage.out).toMatch(/^c3c3c3c3\s+codex\s+2\s+.*no price/m);
  const group = results.usageJson.out
    .split('\n')
    .map((l) => JSON.parse(l) as { group?: string; cost: unknown; unpriced: number })
    .find((g) => g.group === `codex:${SESSION}`)!;
  expect(group).toMatchObject({ cost: null, unpriced: 2 });
  return { show: results.show.out };
}

describe('a huge price or a huge token count is "no price", with the reason, in every command', () => {
  it('loopgate.json prices a model at 1.7e308 USD per million tokens', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'loopgate-huge-price-'));
    writeFileSync(
      join(cwd, 'loopgate.json'),
      JSON.stringify({ prices: { 'gpt-4o-mini': { input: HUGE, output: HUGE } } }),
    );
    const { env, port, ids } = await twoTurns(cwd, []);
    await expectNoPriceEverywhere(env, port, ids[1]!, /too large to be an estimate.*loopgate\.json "prices"/);
  });

  it('the upstream reports 1.7e308 tokens', async () => {
    const up = await hugeUsageUpstream();
    servers.push(up.server);
    const cwd = mkdtempSync(join(tmpdir(), 'loopgate-huge-tokens-'));
    const { env, port, ids } = await twoTurns(cwd, ['--upstream', up.url, '--allow-http']);
    const { show } = await expectNoPriceEverywhere(env, port, ids[1]!, /upstream reported .*tokens/);
    // The answer's own usage line reads no count out of 1.7e308 (its leading 1 is none).
    expect(show).not.toMatch(/^ {2}usage\s+input 1\b/m);
  });
});
