// The bridge under the official SDKs, before (and independent of) the proxy wiring:
// test-only glue runs the translators over the simulator's chat-only group.

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { startGlue, type Glue } from './glue-server.js';
import { defineSdkScenarios, type Clients } from './sdk-scenarios.js';

let sim: Simulator;
let glue: Glue;
let clients: Clients;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  const key = sim.fixture.keys.find((k) => k.group === 'chat-only')!.key;
  glue = await startGlue(sim.url, key);
  clients = {
    openai: new OpenAI({ baseURL: `${glue.origin}/v1`, apiKey: 'unused-by-glue', maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: glue.origin, apiKey: 'unused-by-glue', maxRetries: 0, logLevel: 'error' }),
  };
});

afterAll(async () => {
  await glue?.close();
  await sim?.close();
});

describe('bridge under the official SDKs (test glue over the simulator chat-only group)', () => {
  it('the chat-only group really has no Responses or Messages route', async () => {
    const key = sim.fixture.keys.find((k) => k.group === 'chat-only')!.key;
    const r = await fetch(`${sim.baseUrl}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'x' }),
    });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('endpoint_not_supported');
  });

  defineSdkScenarios(() => clients, { responsesModel: 'gpt-4o-mini', messagesModel: 'claude-sonnet-4-6' });

  it('sent the Codex extras to chat only where chat has them', () => {
    // The Codex-shaped turn is the one with parallel_tool_calls: false; its cache key is a hint the chat route does not get.
    const codex = glue.chatRequests.find((c) => c.parallel_tool_calls === false)!;
    expect(codex).toMatchObject({ parallel_tool_calls: false, tool_choice: 'auto' });
    expect(codex).not.toHaveProperty('prompt_cache_key');
    expect(codex).not.toHaveProperty('store');
    expect(codex).not.toHaveProperty('client_metadata');
    expect(codex).not.toHaveProperty('include');
  });
});
