// `loopgate doctor` and `loopgate models` against the simulator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../proxy/simulator/index.js';
import { KEYS } from '../proxy/stack.js';
import { runCli } from './io.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});
afterAll(() => sim.close());

describe('loopgate doctor', () => {
  it('walks the first-use order and passes for a good key (exit 0)', async () => {
    const r = await runCli(['doctor', '--upstream', `${sim.baseUrl}/v1`], { LOOPGATE_API_KEY: KEYS.default });
    expect(r.code).toBe(0);
    const names = r.out.split('\n').filter((l) => /^\d\./.test(l)).map((l) => l.split(/\s{2,}/)[0]);
    expect(names).toEqual([
      '1. URL form',
      '2. API key',
      '3. GET /models',
      '4. POST /responses (stream false)',
      '4. POST /responses (stream true)',
      '4. POST /chat/completions (stream false)',
      '4. POST /chat/completions (stream true)',
      '5. POST {site_url}/v1/messages',
    ]);
    expect(r.out).toMatch(/1\. URL form\s+WARN.*\/v1 2 times/);
    expect(r.out).toMatch(/5\. POST \{site_url\}\/v1\/messages\s+SKIP/);
  });

  it('a Claude group: Responses is missing on the route (a warning: Responses failing while Chat Completions works is the route, not the key), Messages passes', async () => {
    const r = await runCli(['doctor', '--upstream', sim.url, '--json'], { LOOPGATE_API_KEY: KEYS.claude });
    const report = JSON.parse(r.out);
    expect(r.code).toBe(0);
    const byName = Object.fromEntries(report.steps.map((s: { name: string; result: string }) => [s.name, s.result]));
    expect(byName['4. POST /responses (stream false)']).toBe('warn');
    expect(byName['4. POST /chat/completions (stream true)']).toBe('ok');
    expect(byName['5. POST {site_url}/v1/messages (stream true)']).toBe('ok');
  });

  it('a bad key fails at /models with the diagnosis (exit 1), and never prints the key', async () => {
    const key = 'sk-doctor-canary-key-00000000000000000';
    const r = await runCli(['doctor', '--upstream', sim.url], { LOOPGATE_API_KEY: key });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/3\. GET \/models\s+FAIL\s+401.*rejected the API key/);
    expect(r.out + r.err).not.toContain(key);
  });

  it('a key with "Bearer " pasted in front fails at the key step: bad configuration (exit 3)', async () => {
    const r = await runCli(['doctor', '--upstream', sim.url], { LOOPGATE_API_KEY: `Bearer ${KEYS.default}` });
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/2\. API key\s+FAIL/);
  });

  it('reads the key from stdin with --key-stdin', async () => {
    const r = await runCli(['doctor', '--upstream', sim.url, '--key-stdin'], {}, `${KEYS.default}\n`);
    expect(r.code).toBe(0);
  });
});

describe('loopgate models', () => {
  it('prints a table of the key group\'s models with protocols', async () => {
    const r = await runCli(['models', '--upstream', sim.url], { LOOPGATE_API_KEY: KEYS.claude });
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^MODEL ID\s+OWNED BY\s+PROTOCOLS$/);
    expect(r.out).toMatch(/claude-sonnet-4-6\s+anthropic\s+chat, messages/);
  });

  it('--json prints the raw list', async () => {
    const r = await runCli(['models', '--upstream', sim.url, '--json'], { LOOPGATE_API_KEY: KEYS.narrow });
    expect(JSON.parse(r.out).map((m: { id: string }) => m.id)).toEqual(['gpt-4o-mini']);
  });

  it('explains a refusal (exit 1)', async () => {
    const r = await runCli(['models', '--upstream', sim.url], { LOOPGATE_API_KEY: KEYS.disabled });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/401/);
  });
});

describe('loopgate doctor with several keys', () => {
  it('checks each key in the first-use order, then says which key serves each model on each protocol', async () => {
    const r = await runCli(['doctor', '--upstream', sim.url, '--allow-http'], { LOOPGATE_API_KEY: `claude=${KEYS.claude},default=${KEYS.default}` });
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(/^key claude\n/m);
    expect(r.out).toMatch(/^key default\n/m);
    const matrix = r.out.slice(r.out.indexOf('Which key serves what'));
    expect(matrix).toMatch(/^claude-sonnet-4-6\s+claude bridged\s+claude native\s+claude native$/m);
    expect(matrix).toMatch(/^gpt-4o-mini\s+default native\s+default native\s+default bridged$/m);
    for (const k of [KEYS.claude, KEYS.default]) expect(r.out + r.err).not.toContain(k);
    const json = JSON.parse((await runCli(['doctor', '--upstream', sim.url, '--allow-http', '--json'], { LOOPGATE_API_KEY: `claude=${KEYS.claude},default=${KEYS.default}` })).out);
    expect(json.keys.map((k: { name: string }) => k.name)).toEqual(['claude', 'default']);
    expect(json.matrix.find((row: { model: string }) => row.model === 'claude-sonnet-4-6').routes).toEqual({ responses: 'claude bridged', chat: 'claude native', messages: 'claude native' });
  });
});
