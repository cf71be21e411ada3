import { describe, expect, it } from 'vitest';
import { KEYS, openai, raw, rejection, start } from './helpers.js';
import OpenAI from 'openai';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

describe('GET /v1/models', () => {
  it('lists the group models with owner, fixed created and endpoint types', async () => {
    const page = await openai(sim).models.list();
    const ids = page.data.map((m) => m.id);
    expect(ids).toEqual([
      'gpt-4o-mini',
      'gpt-4.1',
      'gpt-5-mini',
      'o4-mini',
      'deepseek-chat',
      'gpt-6.1-sol',
      'qwen3.7-max',
    ]);
    for (const m of page.data) {
      expect(m.object).toBe('model');
      expect(m.created).toBe(1_715_000_000);
      expect((m as unknown as { supported_endpoint_types: string[] }).supported_endpoint_types).toEqual([
        'openai',
        'openai-response',
      ]);
    }
    expect(page.data.find((m) => m.id === 'deepseek-chat')?.owned_by).toBe('deepseek');
    expect(page.data.find((m) => m.id === 'gpt-4o-mini')?.owned_by).toBe('openai');
  });

  it('returns the list envelope', async () => {
    const res = await raw(sim, '/v1/models', { headers: { authorization: `Bearer ${KEYS.main}` } });
    const body = (await res.json()) as { object: string; data: unknown[] };
    expect(res.status).toBe(200);
    expect(body.object).toBe('list');
    expect(res.headers.get('x-oneapi-request-id')).toMatch(/^\d{17}[0-9a-f]{8}\d{6}$/);
  });

  it('maps the claude group protocols to openai + anthropic', async () => {
    const page = await openai(sim, KEYS.claude).models.list();
    expect(page.data.map((m) => m.id)).toContain('claude-sonnet-4-6');
    expect((page.data[0] as unknown as { supported_endpoint_types: string[] }).supported_endpoint_types).toEqual([
      'openai',
      'anthropic',
    ]);
    // Claude's models, and Qwen Code's anthropic-mode default (coder-model) by its own owner.
    expect(page.data.every((m) => m.owned_by === (m.id === 'coder-model' ? 'qwen' : 'anthropic'))).toBe(true);
  });

  it('narrows the list to the key model list', async () => {
    const page = await openai(sim, KEYS.narrow).models.list();
    expect(page.data.map((m) => m.id)).toEqual(['gpt-4o-mini']);
  });

  it('chat-only group advertises only the openai endpoint type', async () => {
    const page = await openai(sim, KEYS.chatOnly).models.list();
    expect(page.data.map((m) => m.id)).toEqual([
      'gpt-4o-mini',
      'claude-sonnet-4-6',
      'deepseek-reasoner',
      'claude-opus-5-5',
      'claude-haiku-5-5',
      'gpt-6.1-sol',
      'qwen3.7-max',
    ]);
    expect(page.data[2]).not.toHaveProperty('reasoning'); // a simulator setting, not part of the model object
    expect((page.data[1] as unknown as { supported_endpoint_types: string[] }).supported_endpoint_types).toEqual([
      'openai',
    ]);
  });

  it('retrieves one model, and 404s a model the key cannot see', async () => {
    const m = await openai(sim).models.retrieve('gpt-4.1');
    expect(m).toMatchObject({ id: 'gpt-4.1', object: 'model', owned_by: 'openai' });
    const err = await rejection(openai(sim, KEYS.narrow).models.retrieve('gpt-4.1'));
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.code).toBe('model_not_found');
  });

  it('does not take x-api-key on the OpenAI routes', async () => {
    const res = await raw(sim, '/v1/models', { headers: { 'x-api-key': KEYS.main } });
    expect(res.status).toBe(401);
  });
});
