// Issue 39 H-4: `loopgate run`'s credential is narrower than the token. It calls
// the model API and reads its own session (issue 43: the ring, the sessions and
// the faults report, filtered to its own requests), nothing else (403 on the rest
// of /_loopgate/*: stats, the live feed, fault arming), only while its run lives (a start in 1970 or 2100, or a run that
// ended, is refused), and every sink masks it in every form the token is masked
// in. Through the built CLI (`loopgate run`, `loopgate show`) and a real proxy.
import { readdirSync, readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tempHome } from './io.js';
import { runBuiltCli } from './terminal-run.js';
import { logRecords, startStack, TOKEN, untilAsync, type Stack } from '../proxy/stack.js';
import { runCredential } from '../../rules/access/run-credential.js';
import { secretForms } from '../../rules/redaction/known-secrets.js';

const runBuilt = (args: string[], env: NodeJS.ProcessEnv) => runBuiltCli(args, { env });

// Each case starts the built CLI two to four times: on a loaded machine that alone can pass vitest's 20 s default.
vi.setConfig({ testTimeout: 120_000 });

let stack: Stack;
let port: string;
let cassettes: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  cassettes = mkdtempSync(join(tmpdir(), 'loopgate-run-cassette-'));
  stack = await startStack({ logBodies: true, recordDir: cassettes });
  port = new URL(stack.proxy.url).port;
  env = { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN };
});
afterAll(async () => stack?.close());

/** A tool under `loopgate run` that runs `body` (an async function body with `key` and `base` in scope) and prints its result. */
function tool(body: string): string {
  return `(async () => { const key = process.env.OPENAI_API_KEY; const base = process.env.OPENAI_BASE_URL; ${body} })().then((r) => process.stdout.write(JSON.stringify(r)))`;
}

async function underRun(body: string): Promise<Record<string, unknown>> {
  const ran = await runBuilt(['run', '--port', port, '--', process.execPath, '-e', tool(body)], env);
  expect(ran.code, ran.err).toBe(0);
  return JSON.parse(ran.out) as Record<string, unknown>;
}

describe('the run credential', () => {
  it('calls the model API, reads only its own session, and is refused on the rest of /_loopgate/, fault arming included', async () => {
    // Another tool's request, under the token: the run must not see it.
    const other = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'not the run' }] }),
    });
    expect(other.status).toBe(200);
    const seen = await underRun(`
      const auth = { authorization: 'Bearer ' + key };
      const origin = new URL(base).origin;
      const status = async (path, init = {}) => {
        const res = await fetch(origin + path, { ...init, headers: { ...auth, ...(init.headers ?? {}) } });
        return { status: res.status, code: res.headers.get('x-loopgate-diagnosis'), text: await res.text() };
      };
      return {
        models: await status('/v1/models'),
        chat: await status('/v1/chat/completions', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'the run' }] }),
        }),
        sessions: await status('/_loopgate/sessions'),
        traffic: await status('/_loopgate/traffic'),
        faults: await status('/_loopgate/faults'),
        stats: await status('/_loopgate/stats'),
        live: await status('/_loopgate/traffic/live'),
        arm: await status('/_loopgate/faults', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ rule: 'status=500' }),
        }),
      };`);
    expect(seen.models).toMatchObject({ status: 200 });
    // Its own session and requests only (the run's /v1/models and chat turn).
    const own = (name: string) => JSON.parse((seen[name] as { text: string }).text) as Record<string, unknown[]>;
    const sessions = own('sessions').sessions as Array<{ id: string }>;
    expect(sessions.map((s) => s.id)).toEqual([expect.stringMatching(/^run:node-/)]);
    const traffic = own('traffic').entries as Array<{ record: { session?: { id: string } } }>;
    expect(traffic.map((e) => e.record.session?.id)).toEqual([sessions[0]!.id, sessions[0]!.id]);
    expect((seen.traffic as { text: string }).text).not.toContain('not the run');
    expect(own('faults')).toMatchObject({ report: [] });
    for (const name of ['stats', 'live', 'arm']) {
      const answer = seen[name] as { status: number; code: string; text: string };
      expect(answer.status, name).toBe(403);
      expect(answer.code).toBe('run-credential-not-for-loopgate-api');
      expect(answer.text).toContain("Loopgate's own API (/_loopgate/...) takes the local token");
    }
    const faults = await fetch(`${stack.proxy.url}/_loopgate/faults`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(((await faults.json()) as { armed: unknown[] }).armed).toEqual([]);
  });

  it('is refused when its run starts in 1970 or 2100, and once its run has ended', async () => {
    for (const [started, code] of [
      [0, 'run-credential-expired'],
      [Date.parse('1970-01-02T00:00:00Z'), 'run-credential-expired'],
      [Date.parse('2100-01-01T00:00:00Z'), 'run-credential-future'],
    ] as const) {
      const credential = runCredential(TOKEN, { tool: 'old', started, nonce: 'abcd12' });
      const res = await fetch(`${stack.proxy.url}/v1/models`, { headers: { authorization: `Bearer ${credential}` } });
      expect(res.status, String(started)).toBe(401);
      expect(res.headers.get('x-loopgate-diagnosis')).toBe(code);
      expect(await res.text()).toContain('Start the tool again with `loopgate run`');
    }
    // A run that printed its credential and exited: the credential is dead with it.
    const { key } = await underRun('return { key };');
    const after = await fetch(`${stack.proxy.url}/v1/models`, { headers: { authorization: `Bearer ${String(key)}` } });
    expect(after.status).toBe(401);
    expect(after.headers.get('x-loopgate-diagnosis')).toBe('run-credential-ended');
  });

  it('never reaches the ring, the body log, `show` or a cassette, in any form (canary sweep)', async () => {
    const seen = await underRun(`
      const hex = Buffer.from(key).toString('hex');
      const forms = [
        '\\n' + key, '\\t' + key, '%20' + key, key,
        Buffer.from(key).toString('base64'), Buffer.from('user:' + key).toString('base64'),
        Buffer.from(key).toString('base64url'), hex, hex.toUpperCase(), encodeURIComponent(key),
      ];
      // JSON's own \\u escapes in the body's text (a reader decodes them back to the credential).
      const escaped = [...key].map((c) => '\\\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')).join('');
      const content = JSON.stringify('say: ' + forms.join(' | ')).slice(0, -1) + ' | ' + escaped + '"';
      const res = await fetch(base + '/chat/completions', {
        method: 'POST',
        headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' },
        body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":' + content + '}]}',
      });
      return { key, id: res.headers.get('x-loopgate-request-id'), status: res.status, body: await res.text() };`);
    expect(seen.status).toBe(200);
    const key = String(seen.key);
    const id = String(seen.id);
    const entry = await untilAsync(async () => {
      const res = await fetch(`${stack.proxy.url}/_loopgate/traffic/${id}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      return res.status === 200 ? await res.text() : undefined;
    });
    const logged = await untilAsync(async () => {
      const rec = logRecords(stack.logFile).find((r) => r.id === id);
      return rec ? readFileSync(stack.logFile, 'utf8') : undefined;
    });
    const show = await runBuilt(['show', id, '--port', port], env);
    expect(show.code, show.err).toBe(0);
    const wire = await runBuilt(['show', id, '--wire', '--port', port], env);
    const recorded = await untilAsync(async () => {
      const files = readdirSync(cassettes, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
      const text = files.map((f) => readFileSync(join(f.parentPath, f.name), 'utf8')).join('\n');
      return text.includes(id) || text.includes('say: ') ? text : undefined;
    });
    // The body did get through (the sinks hold the request), with every form masked.
    expect(entry).toContain('say: ');
    const sinks = { ring: entry, log: logged, show: show.out, wire: wire.out, cassette: recorded };
    const forms = [...secretForms(key), `\\n${key}`, `\\t${key}`, `%20${key}`];
    for (const [sink, text] of Object.entries(sinks)) {
      for (const form of forms) expect(text.includes(form), `${sink}: ${form.slice(0, 40)}`).toBe(false);
      // Nor the MAC, the credential's secret part, in any plain stretch.
      expect(text, sink).not.toContain(key.slice(-32));
    }
  });
});
