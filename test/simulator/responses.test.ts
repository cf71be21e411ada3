import { describe, expect, it } from 'vitest';
import { openai, start } from './helpers.js';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

describe('POST /v1/responses', () => {
  it('answers with output_text and usage (stream false)', async () => {
    const r = await openai(sim).responses.create({ model: 'gpt-4o-mini', input: 'Hello there' });
    expect(r.object).toBe('response');
    expect(r.status).toBe('completed');
    expect(r.output_text).toBe('Echo: Hello there');
    expect(r.usage).toMatchObject({ input_tokens: 3, output_tokens: 5, total_tokens: 8 });
  });

  it('takes an array input and uses the last user message', async () => {
    const r = await openai(sim).responses.create({
      model: 'gpt-4.1',
      instructions: 'Be brief',
      input: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'input_text', text: 'second question' }] },
      ],
    });
    expect(r.output_text).toBe('Echo: second question');
    expect(r.instructions).toBe('Be brief');
  });

  it('streams the full typed event sequence with sequence numbers (stream true)', async () => {
    const stream = await openai(sim).responses.create({ model: 'gpt-4o-mini', input: 'Hello there', stream: true });
    const types: string[] = [];
    const seqs: number[] = [];
    let text = '';
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
    }
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.filter((t) => t === 'response.output_text.delta').length).toBeGreaterThanOrEqual(3);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(text).toBe('Echo: Hello there');
  });

  it('responses.stream().finalResponse() accumulates the reply', async () => {
    const final = await openai(sim).responses.stream({ model: 'gpt-4o-mini', input: 'Hello there' }).finalResponse();
    expect(final.output_text).toBe('Echo: Hello there');
    expect(final.status).toBe('completed');
    expect(final.usage?.output_tokens).toBe(5);
  });

  it('max_output_tokens cuts the reply: status incomplete', async () => {
    const r = await openai(sim).responses.create({
      model: 'gpt-4o-mini',
      input: 'a long question about things',
      max_output_tokens: 2,
    });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details?.reason).toBe('max_output_tokens');
    expect(r.output_text).toBe('Echo: a ');
    const final = await openai(sim)
      .responses.stream({ model: 'gpt-4o-mini', input: 'a long question about things', max_output_tokens: 2 })
      .finalResponse();
    expect(final.status).toBe('incomplete');
    expect(final.output_text).toBe('Echo: a ');
  });
});
