import { describe, expect, it } from 'vitest';
import { KEYS, anthropic, hello, raw, start } from './helpers.js';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

describe('POST /v1/messages', () => {
  it('answers with a text block and usage (stream false)', async () => {
    const m = await anthropic(sim).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 256, messages: hello });
    expect(m.type).toBe('message');
    expect(m.role).toBe('assistant');
    expect(m.content).toEqual([{ type: 'text', text: 'Echo: Hello there' }]);
    expect(m.stop_reason).toBe('end_turn');
    expect(m.usage).toMatchObject({ input_tokens: 4, output_tokens: 5 });
  });

  it('streams message_start … message_stop (stream true)', async () => {
    const stream = await anthropic(sim).messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 256,
      messages: hello,
      stream: true,
    });
    const types: string[] = [];
    let text = '';
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    expect(types[0]).toBe('message_start');
    expect(types[1]).toBe('content_block_start');
    expect(types.filter((t) => t === 'content_block_delta').length).toBeGreaterThanOrEqual(3);
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(text).toBe('Echo: Hello there');
  });

  it('messages.stream().finalMessage() accumulates text and usage', async () => {
    const m = await anthropic(sim)
      .messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 256, messages: hello })
      .finalMessage();
    expect(m.content).toEqual([expect.objectContaining({ type: 'text', text: 'Echo: Hello there' })]);
    expect(m.stop_reason).toBe('end_turn');
    expect(m.usage.input_tokens).toBe(4);
    expect(m.usage.output_tokens).toBe(5);
  });

  it('stop_sequences and max_tokens set stop_reason', async () => {
    const s = await anthropic(sim).messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 256,
      messages: hello,
      stop_sequences: ['there'],
    });
    expect(s.stop_reason).toBe('stop_sequence');
    expect(s.stop_sequence).toBe('there');
    const l = await anthropic(sim).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1, messages: hello });
    expect(l.stop_reason).toBe('max_tokens');
  });

  it('accepts x-api-key, with or without ?beta=true (Claude Code)', async () => {
    const res = await raw(sim, '/v1/messages?beta=true', {
      method: 'POST',
      headers: { 'x-api-key': KEYS.claude, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: hello }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { content: Array<{ text: string }> }).content[0]!.text).toBe('Echo: Hello there');
  });
});

describe('POST /v1/messages/count_tokens', () => {
  it('counts with the same estimate as the replies, and checks the group', async () => {
    const r = await anthropic(sim).messages.countTokens({ model: 'claude-sonnet-4-6', messages: hello });
    expect(r.input_tokens).toBe(4);
    const err = await anthropic(sim, KEYS.main)
      .messages.countTokens({ model: 'gpt-4o-mini', messages: hello })
      .then(
        () => ({ status: 200 }),
        (e: { status: number }) => e,
      );
    expect(err.status).toBe(404);
  });
});
