// `loopgate sessions`, `tail --session`, `show`'s session sections and `loopgate
// usage` as a user runs them (in-process, real sockets): `serve` in front of the simulator,
// two agent sessions made with the official SDKs (each with its session header),
// then the proxy stopped and started again: `usage` still reports both sessions
// from the log on disk, while the new proxy's memory holds none. No key and no
// token in anything these commands print.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { KEYS, until, logRecords } from '../proxy/stack.js';
import { defaultLogFile } from '../../storage/config/dirs.js';
import { freePort, runCli, startCli, tempHome, type StartedCli } from './io.js';

// What each client sends, and the id the proxy gives the session (`<client>:<id>`).
const CLAUDE_SESSION = 'a1a1a1a1-0000-4000-8000-00000000000a';
const CODEX_SESSION = 'b2b2b2b2-0000-4000-8000-00000000000b';
const SESSION_A = `claude-code:${CLAUDE_SESSION}`;
const SESSION_B = `codex:${CODEX_SESSION}`;

let sim: Simulator;
let serving: StartedCli | undefined;
const home = tempHome();
let port: number;
let token: string;
const secrets = () => [KEYS.default, KEYS.claude, token];
const env = () => ({ LOOPGATE_HOME: home });

async function serve(): Promise<string> {
  serving = await startCli(
    ['serve', '--port', String(port), '--upstream', sim.baseUrl, '--allow-http'],
    { LOOPGATE_HOME: home, LOOPGATE_API_KEY: `default=${KEYS.default},claude=${KEYS.claude}` },
    /^\s+curl -s (\S+)/,
  );
  return /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(serving.lines.join('\n'))![1]!;
}

async function stop(): Promise<void> {
  if (serving) expect(await serving.stop()).toBe(0);
  serving = undefined;
}

/** A turn of a Claude Code-like session: the official SDK, the session header Claude Code sends. */
async function claudeTurn(url: string, content: string): Promise<string> {
  const client = new Anthropic({
    baseURL: url,
    apiKey: token,
    maxRetries: 0,
    defaultHeaders: { 'x-claude-code-session-id': CLAUDE_SESSION },
  });
  const r = await client.messages
    .create({ model: 'claude-sonnet-4-6', max_tokens: 32, messages: [{ role: 'user', content }] })
    .withResponse();
  return r.response.headers.get('x-loopgate-request-id')!;
}

/** A turn of a Codex-like session: the official OpenAI SDK with the headers Codex sends. */
async function codexTurn(url: string, content: string): Promise<string> {
  const client = new OpenAI({
    baseURL: `${url}/v1`,
    apiKey: token,
    maxRetries: 0,
    defaultHeaders: { originator: 'codex_cli_rs', session_id: CODEX_SESSION },
  });
  const r = await client.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })
    .withResponse();
  return r.response.headers.get('x-loopgate-request-id')!;
}

function noSecrets(text: string): void {
  for (const s of secrets()) expect(text).not.toContain(s);
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  port = await freePort();
  token = (await runCli(['token'], env())).out;
});
afterAll(async () => {
  await stop();
  await sim.close();
});

describe('sessions in memory, usage from the log across a restart', () => {
  let url: string;
  const ids: string[] = [];

  it('`sessions` lists both sessions, as a table and as JSON lines, with no key or token', async () => {
    url = await serve();
    ids.push(await claudeTurn(url, 'first of A'));
    ids.push(await claudeTurn(url, 'second of A'));
    ids.push(await codexTurn(url, 'only one of B'));
    const json = await runCli(['sessions', '--json', '--port', String(port)], env());
    expect(json.code, json.err).toBe(0);
    const lines = json.out.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const a = lines.find((l) => l.id === SESSION_A)!;
    const b = lines.find((l) => l.id === SESSION_B)!;
    expect(a).toMatchObject({ client: 'claude-code', requests: 2 });
    expect(b).toMatchObject({ client: 'codex', requests: 1 });
    // The session's tokens are the sums of its requests' (as the log has them).
    const log = defaultLogFile(env(), port);
    await until(
      () => (ids.every((id) => logRecords(log).some((r) => r.id === id)) ? true : undefined),
      5000,
      'the log',
    );
    for (const s of [a, b]) {
      const recs = logRecords(log).filter((r) => r.session?.id === s.id);
      const sum = (k: 'input' | 'output' | 'cacheRead') => recs.reduce((n, r) => n + (r.tokens?.[k] ?? 0), 0);
      expect(s.tokens).toMatchObject({
        input: sum('input'),
        output: sum('output'),
        cacheRead: sum('cacheRead'),
        cacheWrite: recs.reduce((n, r) => n + (r.tokens ? r.tokens.cacheWrite5m + r.tokens.cacheWrite1h : 0), 0),
      });
      // Priced: an estimate in USD; or null with the reason, never 0.
      if (s.cost === null) expect(s.costNote).toEqual(expect.any(String));
      else expect(s.cost).toMatchObject({ estimated: expect.any(Number), currency: 'USD' });
      expect(s).toHaveProperty('cacheHitRatio');
      expect(s).not.toHaveProperty('seqs');
    }
    const table = await runCli(['sessions', '--port', String(port)], env());
    expect(table.code, table.err).toBe(0);
    expect(table.out).toMatch(/^CLIENT\s+SESSION\s+TURNS\s+IN\/OUT\s+CACHE R\/W\s+EST\. COST\s+CACHE HIT\s+ERRORS/m);
    // The id's unique start, as tail --session takes it.
    expect(table.out).toMatch(/^claude-code\s+a1a1a1a1\s+2\s+\d+\/\d+\s/m);
    expect(table.out).toMatch(/^total\s+-\s+3\s/m);
    expect(table.out).toMatch(/\$\d|no price/);
    expect(table.out).not.toContain('$0.00 ');
    noSecrets(json.out + table.out + json.err + table.err);
  });

  it("`tail --session ID` prints only that session's requests; an unknown id says so and lists the known ones", async () => {
    const a = await runCli(['tail', '--session', SESSION_A, '--no-follow', '--port', String(port)], env());
    expect(a.code, a.err).toBe(0);
    const shown = a.out.split('\n').filter(Boolean);
    expect(shown).toHaveLength(2);
    expect(shown.every((l) => l.includes(ids[0]!.slice(0, 8)) || l.includes(ids[1]!.slice(0, 8)))).toBe(true);
    const prefix = await runCli(
      ['tail', '--session', CODEX_SESSION.slice(0, 8), '--no-follow', '--json', '--port', String(port)],
      env(),
    );
    expect(prefix.code, prefix.err).toBe(0);
    expect(prefix.out.split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual([ids[2]]);
    const unknown = await runCli(
      ['tail', '--session', 'no-such-session', '--no-follow', '--port', String(port)],
      env(),
    );
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no session "no-such-session" in the proxy\'s memory');
    expect(unknown.err).toContain(SESSION_A);
    expect(unknown.err).toContain(SESSION_B);
  });

  it('`show ID` has the session section, and --json has session, cache and context', async () => {
    const text = await runCli(['show', ids[1]!, '--port', String(port)], env());
    expect(text.code, text.err).toBe(0);
    expect(text.out).toMatch(/^Session$/m);
    expect(text.out).toMatch(new RegExp(`^ {2}id\\s+${SESSION_A} \\(claude-code, by header\\)$`, 'm'));
    expect(text.out).toMatch(/^ {2}turns\s+2 of 2 requests/m);
    const json = await runCli(['show', ids[1]!, '--json', '--port', String(port)], env());
    const entry = JSON.parse(json.out) as {
      session: { id: string };
      cache: { verdict: string; summary: string } | null;
      context: { total: number; parts: Array<{ label: string }> } | null;
    };
    expect(entry).toHaveProperty('session');
    expect(entry).toHaveProperty('cache');
    expect(entry).toHaveProperty('context');
    expect(entry.session.id).toBe(SESSION_A);
    // The text renders what the proxy worked out (cache forensics and the context split are r33-forensics'):
    // each section exactly when the answer has it.
    expect(/^Cache$/m.test(text.out)).toBe(entry.cache !== null);
    if (entry.cache) expect(text.out).toMatch(new RegExp(`^ {2}outcome\\s+${entry.cache.verdict}: `, 'm'));
    expect(/^Context {2}[\d,]+ tokens/m.test(text.out)).toBe(entry.context !== null);
    for (const part of entry.context?.parts ?? []) expect(text.out).toContain(`  ${part.label} `);
    noSecrets(text.out + json.out);
  });

  it('after a restart, `usage` reports both earlier sessions from the log; the new proxy holds none', async () => {
    const log = defaultLogFile(env(), port);
    await until(
      () => (ids.every((id) => logRecords(log).some((r) => r.id === id)) ? true : undefined),
      5000,
      'the log',
    );
    await stop();
    url = await serve();
    const now = await runCli(['sessions', '--json', '--port', String(port)], env());
    expect(now.code, now.err).toBe(0);
    expect(now.out).not.toContain(SESSION_A);

    const json = await runCli(['usage', '--by', 'session', '--json', '--port', String(port)], env());
    expect(json.code, json.err).toBe(0);
    const groups = json.out.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const a = groups.find((g) => g.group === SESSION_A)!;
    const b = groups.find((g) => g.group === SESSION_B)!;
    expect(a).toMatchObject({ by: 'session', client: 'claude-code', requests: 2, errors: 0 });
    expect(b).toMatchObject({ by: 'session', client: 'codex', requests: 1 });
    // The sums are the sums of the logged requests' tokens.
    // (A line without the exact split counts its usage's input and output.)
    const recs = logRecords(log).filter((r) => r.session?.id === SESSION_A);
    const sum = (k: 'input' | 'output') => recs.reduce((n, r) => n + (r.tokens?.[k] ?? r.usage?.[k] ?? 0), 0);
    expect(sum('output')).toBeGreaterThan(0);
    expect((a.tokens as { output: number }).output).toBe(sum('output'));
    expect((a.tokens as { input: number }).input).toBe(sum('input'));
    const total = groups.at(-1)!;
    expect(total).toMatchObject({ by: 'session', total: true });
    expect(total.requests).toBe(logRecords(log).length);

    const table = await runCli(['usage', '--by', 'session', '--port', String(port)], env());
    expect(table.code, table.err).toBe(0);
    expect(table.out).toMatch(
      /^SESSION\s+CLIENT\s+REQUESTS\s+IN\/OUT\s+CACHE R\/W\s+EST\. COST\s+CACHE HIT\s+ERRORS$/m,
    );
    expect(table.out).toMatch(/^a1a1a1a1\s+claude-code\s+2\s+\d+\/\d+\s/m);
    expect(table.out).toMatch(/^total\s+-\s+\d+\s+\d+\/\d+\s/m);
    for (const by of ['day', 'model', 'key']) {
      const r = await runCli(['usage', '--by', by, '--since', '1d', '--port', String(port)], env());
      expect(r.code, `${by}: ${r.err}`).toBe(0);
      noSecrets(r.out + r.err);
    }
    const byKey = await runCli(['usage', '--by', 'key', '--json', '--port', String(port)], env());
    expect(byKey.out).toMatch(/"group":"claude"/);
    noSecrets(json.out + table.out + byKey.out);
  });

  it('bad input gets a clear error (exit 2), and a log that is not there says where it looked (exit 3)', async () => {
    const banana = await runCli(['usage', '--since', 'banana', '--port', String(port)], env());
    expect(banana.code).toBe(2);
    expect(banana.err).toContain(
      '--since "banana" is neither a duration (e.g. 15m, 2h, 1d) nor a date (2026-11-21 or 20261121, local midnight) nor an ISO time',
    );
    const colour = await runCli(['usage', '--by', 'colour', '--port', String(port)], env());
    expect(colour.code).toBe(2);
    expect(colour.err).toContain('--by takes day, session, model, key (got "colour")');
    const none = await runCli(['usage', '--log', '/nonexistent/traffic.jsonl'], env());
    expect(none.code).toBe(3);
    expect(none.err).toContain('cannot read traffic log /nonexistent/traffic.jsonl: no such file');
  });
});
