// Demo mode's family fallback through the real proxy and simulator as
// `loopgate serve` starts them with no upstream (cli/start-serve.ts: the demo
// keys), with the official SDKs: a newer model of a demo family is served as
// the closest demo model, and the answer's `model`, x-sim-served-model, the
// record and the console say so. A simulator not in demo mode, and a proxy
// whose upstream is not the embedded simulator, never guess.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type StartedServe } from '../../cli/start-serve.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { logRecords, threeGroupKeys, TOKEN, until } from './stack.js';

interface Demo {
  traffic: string[];
  hints: string[];
  logFile: string;
  url: string;
}

function sinks(): Omit<Demo, 'url'> {
  return {
    traffic: [],
    hints: [],
    logFile: join(mkdtempSync(join(tmpdir(), 'loopgate-demo-family-')), 'traffic.jsonl'),
  };
}

/** Where a proxy puts its log, console lines and hints: into these sinks. */
function into(s: Omit<Demo, 'url'>) {
  return { logFile: s.logFile, onTraffic: (l: string) => s.traffic.push(l), onHint: (h: string) => s.hints.push(h) };
}

const recordOf = (d: Demo, id: string) =>
  until(() => logRecords(d.logFile).find((r) => r.id === id), 5000, `the record of ${id}`);
const openai = (d: Demo) => new OpenAI({ baseURL: `${d.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
const anthropic = (d: Demo) => new Anthropic({ baseURL: d.url, apiKey: TOKEN, maxRetries: 0 });

describe('demo mode (`loopgate serve` with no upstream)', () => {
  let served: StartedServe;
  let demo: Demo;
  beforeAll(async () => {
    const s = sinks();
    served = await startServe({
      token: TOKEN,
      port: 0,
      ...into(s),
    });
    await served.proxy.refreshModels();
    demo = { ...s, url: served.proxy.url };
  });
  afterAll(() => served?.close());

  it('Responses: gpt-6.2-sol is served as gpt-6.1-sol, and the answer, header, record, console and a hint say so', async () => {
    const { data, response } = await openai(demo)
      .responses.create({ model: 'gpt-6.2-sol', input: 'hi' })
      .withResponse();
    expect(data.output_text).toBe('Echo: hi');
    // What pricing reads: the model that answered.
    expect(data.model).toBe('gpt-6.1-sol');
    expect(response.headers.get('x-sim-served-model')).toBe('gpt-6.1-sol');
    const rec = await recordOf(demo, response.headers.get('x-loopgate-request-id')!);
    expect(rec).toMatchObject({ model: 'gpt-6.2-sol', servedModel: 'gpt-6.1-sol', status: 200, key: 'default' });
    expect(demo.traffic.some((l) => l.includes('200 gpt-6.2-sol (demo: served gpt-6.1-sol)'))).toBe(true);
    expect(demo.hints.filter((h) => h.startsWith('Demo mode: the demo keys do not list "gpt-6.2-sol"'))).toHaveLength(
      1,
    );
    // The simulator's record says it too.
    expect(served.simulator!.requests.some((r) => r.model === 'gpt-6.2-sol' && r.servedModel === 'gpt-6.1-sol')).toBe(
      true,
    );
  });

  it('Messages, streamed: claude-opus-5-6 goes to the Claude key and is served as claude-opus-5-5', async () => {
    const stream = anthropic(demo).messages.stream({
      model: 'claude-opus-5-6',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const msg = await stream.finalMessage();
    expect(msg.model).toBe('claude-opus-5-5');
    expect(msg.content).toEqual([expect.objectContaining({ type: 'text', text: 'Echo: hi' })]);
    await until(
      () =>
        logRecords(demo.logFile).find(
          (r) => r.model === 'claude-opus-5-6' && r.servedModel === 'claude-opus-5-5' && r.key === 'claude',
        ),
      5000,
      'the Messages record',
    );
  });

  it('Chat Completions: an older model between two demo ones is served as the older (claude-opus-4-7 as claude-opus-4-1)', async () => {
    const r = await openai(demo).chat.completions.create({
      model: 'claude-opus-4-7',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(r.model).toBe('claude-opus-4-1');
  });

  it('an unrelated model is still refused, with the closest IDs', async () => {
    const err = await openai(demo)
      .chat.completions.create({ model: 'gemini-3.1-pro', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as Error).message).toMatch(/No key of this proxy lists model "gemini-3.1-pro"/);
  });
});

describe('outside demo mode nothing is guessed', () => {
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of closers) await c();
  });

  async function stack(
    simDemo: boolean,
    proxySimulator: boolean,
  ): Promise<Demo & { sim: Simulator; proxy: RunningProxy }> {
    const s = sinks();
    const sim = await startSimulator({ port: 0, demo: simDemo });
    const proxy = await startProxy({
      upstream: sim.url,
      keys: threeGroupKeys(),
      token: TOKEN,
      port: 0,
      allowHttp: true,
      ...into(s),
      simulator: proxySimulator,
    });
    closers.push(async () => {
      await proxy.close();
      await sim.close();
    });
    await proxy.refreshModels();
    return { ...s, url: proxy.url, sim, proxy };
  }

  /** A proxy with one key (the first group's) in front of `sim`, so it passes every request on; closed after the block. */
  async function oneKeyProxy(sim: Simulator, more: Partial<Parameters<typeof startProxy>[0]>): Promise<RunningProxy> {
    const proxy = await startProxy({
      upstream: sim.url,
      key: threeGroupKeys()[0]!.key,
      token: TOKEN,
      port: 0,
      allowHttp: true,
      ...more,
    });
    closers.push(() => proxy.close());
    return proxy;
  }

  it('a simulator not in demo mode (a fixture of the user): model_not_found', async () => {
    const d = await stack(false, true);
    // One key, so the proxy passes the request on: the relay's own refusal comes back.
    const single = await oneKeyProxy(d.sim, { simulator: true });
    const err = await new OpenAI({ baseURL: `${single.url}/v1`, apiKey: TOKEN, maxRetries: 0 }).responses
      .create({ model: 'gpt-6.2-sol', input: 'hi' })
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/No available channel for model "gpt-6.2-sol"/);
    expect(d.sim.requests.some((r) => r.servedModel)).toBe(false);
  });

  it('a proxy whose upstream is not the embedded simulator routes no guess and believes no x-sim-served-model', async () => {
    const d = await stack(true, false);
    // Several keys, none lists it: the proxy's own 404, the request never leaves.
    const err = await openai(d)
      .responses.create({ model: 'gpt-6.2-sol', input: 'hi' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(d.sim.requests.filter((r) => r.path === '/v1/responses')).toEqual([]);
    // An upstream that sends the header anyway (this one substitutes): the record and console do not repeat it.
    const single = await oneKeyProxy(d.sim, into(d));
    const { response } = await new OpenAI({ baseURL: `${single.url}/v1`, apiKey: TOKEN, maxRetries: 0 }).responses
      .create({ model: 'gpt-6.2-sol', input: 'hi' })
      .withResponse();
    expect(response.headers.get('x-sim-served-model')).toBe('gpt-6.1-sol');
    const rec = await recordOf(d, response.headers.get('x-loopgate-request-id')!);
    expect(rec.servedModel).toBeUndefined();
    expect(d.traffic.some((l) => l.includes('(demo:'))).toBe(false);
    expect(d.hints.some((h) => h.startsWith('Demo mode'))).toBe(false);
  });
});
