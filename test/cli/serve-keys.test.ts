// Issue 14 from the command line: demo mode holds every demo group's key, and
// LOOPGATE_API_KEY takes a list whose bad entries are named (masked) while the
// good keys work.
import { afterEach, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { exited, runCli, spawnCli, tempHome } from './io.js';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { KEYS } from '../proxy/stack.js';
import type { ChildProcess } from 'node:child_process';

let child: ChildProcess | undefined;
let sim: Simulator | undefined;
afterEach(async () => {
  child?.kill('SIGTERM');
  if (child) await exited(child);
  child = undefined;
  await sim?.close();
  sim = undefined;
});

describe('serve with several keys', () => {
  it('with no configuration, the Anthropic SDK on claude-sonnet-4-6 works (the Claude demo key serves it natively)', async () => {
    const home = tempHome();
    const started = await spawnCli(
      ['serve', '--port', '0', '--no-log'],
      { LOOPGATE_HOME: home },
      /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    );
    child = started.child;
    const url = started.match[1]!;
    const token = (await runCli(['token'], { LOOPGATE_HOME: home })).out;
    const r = await new Anthropic({ baseURL: url, apiKey: token, maxRetries: 0 }).messages
      .create({ model: 'claude-sonnet-4-6', max_tokens: 32, messages: [{ role: 'user', content: 'from npm start' }] })
      .withResponse();
    expect(r.data.content[0]).toMatchObject({ type: 'text' });
    expect(r.response.headers.get('x-loopgate-route')).toBe('claude native');
  });

  it('LOOPGATE_API_KEY with names, an empty entry, a bad one and a duplicate: each named (masked), the good keys serve', async () => {
    sim = await startSimulator({ port: 0 });
    const home = tempHome();
    const list = `claude=${KEYS.claude},\n\n,Bearer ${KEYS.default}\ncheap=${KEYS.chatOnly}\n${KEYS.chatOnly}\n`;
    // Ready once the banner's last line is out (the keys line comes after "listening on").
    const started = await spawnCli(
      ['serve', '--port', '0', '--no-log', '--upstream', sim.baseUrl, '--allow-http'],
      { LOOPGATE_HOME: home, LOOPGATE_API_KEY: list },
      /^\s+curl -s (\S+)/,
    );
    child = started.child;
    const text = started.lines.join('\n');
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)![1]!;
    expect(text).toMatch(/warning: LOOPGATE_API_KEY: key #2 is empty/);
    expect(text).toMatch(/warning: LOOPGATE_API_KEY: key #4 \(Beare…\w{4}\): the API key starts with "Bearer "/);
    expect(text).toMatch(
      /warning: LOOPGATE_API_KEY: key #6 \(sk-de…\w{4}\) is the same key as key "cheap"; the copy is ignored/,
    );
    expect(text).toMatch(/keys\s+claude, cheap/);
    for (const k of [KEYS.claude, KEYS.default, KEYS.chatOnly]) expect(text).not.toContain(k);
    const token = (await runCli(['token'], { LOOPGATE_HOME: home })).out;
    const chat = await new OpenAI({ baseURL: `${url}/v1`, apiKey: token, maxRetries: 0 }).chat.completions
      .create({ model: 'deepseek-reasoner', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    expect(chat.response.headers.get('x-loopgate-route')).toBe('cheap native');
  });

  it('a list with no usable key stops serve with exit 3', async () => {
    const r = await runCli(['serve', '--port', '0', '--no-log', '--upstream', 'https://relay.example.com'], {
      LOOPGATE_API_KEY: ' , \n',
    });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/no usable key/);
  });
});
