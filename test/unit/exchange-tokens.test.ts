// record.tokens (issue 33 §2): the one conversion from each protocol's usage
// to TokenCounts, read from the text build-record scans (JSON answers, SSE
// streams, the capture's head+tail seam).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exchangeTokens, tokenCounts } from '../../rules/protocols/index.js';

const sse = (events: Array<[string | null, unknown]>) =>
  events.map(([name, data]) => `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`).join('');

describe('exchangeTokens', () => {
  it('Anthropic stream: message_start (input, cache read, the 5m/1h write split) plus message_delta (output)', () => {
    const text = sse([
      [
        'message_start',
        {
          type: 'message_start',
          message: {
            usage: {
              input_tokens: 12,
              cache_creation_input_tokens: 300,
              cache_read_input_tokens: 2000,
              cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
              output_tokens: 1,
            },
          },
        },
      ],
      ['content_block_delta', { type: 'content_block_delta', delta: { type: 'text_delta', text: 'hi' } }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 42 } }],
      ['message_stop', { type: 'message_stop' }],
    ]);
    const got = exchangeTokens('messages', text);
    expect(got.tokens).toEqual({
      input: 12,
      output: 42,
      cacheRead: 2000,
      cacheWrite5m: 100,
      cacheWrite1h: 200,
      reasoning: 0,
    });
    // record.usage keeps its old meaning (Messages' own input_tokens).
    expect(got.usage).toEqual({ input: 12, output: 42, total: 54 });
  });

  it('Anthropic without the cache_creation split: every write is 5-minute', () => {
    const body = JSON.stringify({
      usage: { input_tokens: 5, output_tokens: 7, cache_creation_input_tokens: 1500, cache_read_input_tokens: 0 },
    });
    expect(exchangeTokens('messages', body).tokens).toMatchObject({ input: 5, cacheWrite5m: 1500, cacheWrite1h: 0 });
  });

  it('Chat JSON: input is the prompt less the cached part; reasoning is inside output', () => {
    const body = JSON.stringify({
      choices: [{ message: { content: 'the word "usage": {"prompt_tokens": 999} in a string' } }],
      usage: {
        prompt_tokens: 1300,
        completion_tokens: 80,
        total_tokens: 1380,
        prompt_tokens_details: { cached_tokens: 1152 },
        completion_tokens_details: { reasoning_tokens: 64 },
      },
    });
    expect(exchangeTokens('chat', body)).toEqual({
      usage: { input: 1300, output: 80, total: 1380 },
      tokens: { input: 148, output: 80, cacheRead: 1152, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 64 },
    });
  });

  it('Chat stream with include_usage: "usage":null chunks are skipped, the last chunk counts', () => {
    const text =
      sse([
        [null, { choices: [{ delta: { content: 'a' } }], usage: null }],
        [null, { choices: [{ delta: {}, finish_reason: 'stop' }], usage: null }],
        [null, { choices: [], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } }],
      ]) + 'data: [DONE]\n\n';
    expect(exchangeTokens('chat', text).tokens).toMatchObject({ input: 9, output: 3 });
  });

  it('Responses stream: response.created carries usage null, response.completed the counts', () => {
    const text = sse([
      ['response.created', { type: 'response.created', response: { usage: null } }],
      [
        'response.completed',
        {
          type: 'response.completed',
          response: {
            tools: [{ parameters: { properties: { usage: { type: 'string' } } } }],
            usage: {
              input_tokens: 2048,
              input_tokens_details: { cached_tokens: 1024 },
              output_tokens: 10,
              output_tokens_details: { reasoning_tokens: 4 },
              total_tokens: 2058,
            },
          },
        },
      ],
    ]);
    expect(exchangeTokens('responses', text).tokens).toEqual({
      input: 1024,
      output: 10,
      cacheRead: 1024,
      cacheWrite5m: 0,
      cacheWrite1h: 0,
      reasoning: 4,
    });
  });

  it('a usage object cut at the head/tail seam is skipped, the whole ones still count', () => {
    const start = sse([['message_start', { message: { usage: { input_tokens: 7, output_tokens: 1 } } }]]);
    const cut = '{"type":"message_delta","usage":{"output_tok';
    const tail = sse([['message_delta', { usage: { output_tokens: 30 } }]]);
    expect(exchangeTokens('messages', start + cut + '\n' + tail).tokens).toMatchObject({ input: 7, output: 30 });
    expect(exchangeTokens('messages', 'no counts here')).toEqual({});
  });

  it('a WebSocket message (a Buffer) is read the same way', () => {
    const msg = Buffer.from(
      JSON.stringify({ type: 'response.completed', response: { usage: { input_tokens: 3, output_tokens: 4 } } }),
    );
    expect(exchangeTokens('responses', msg).tokens).toMatchObject({ input: 3, output: 4 });
  });
});

describe('tokenCounts', () => {
  it('its parts never overlap: input + cache read + both writes is the whole prompt (property)', () => {
    fc.assert(
      fc.property(
        fc.nat(1e7),
        fc.nat(1e7),
        fc.nat(1e7),
        fc.nat(1e7),
        fc.nat(1e6),
        (uncached, read, write5m, write1h, output) => {
          const body = JSON.stringify({
            usage: {
              input_tokens: uncached,
              output_tokens: output,
              cache_read_input_tokens: read,
              cache_creation_input_tokens: write5m + write1h,
              cache_creation: { ephemeral_5m_input_tokens: write5m, ephemeral_1h_input_tokens: write1h },
            },
          });
          const t = exchangeTokens('messages', body).tokens!;
          expect(t).toEqual({
            input: uncached,
            output,
            cacheRead: read,
            cacheWrite5m: write5m,
            cacheWrite1h: write1h,
            reasoning: 0,
          });
          const prompt = uncached + read + write5m + write1h;
          const chat = JSON.stringify({
            usage: { prompt_tokens: prompt, completion_tokens: output, prompt_tokens_details: { cached_tokens: read } },
          });
          const c = exchangeTokens('chat', chat).tokens!;
          expect(c.input + c.cacheRead + c.cacheWrite5m + c.cacheWrite1h).toBe(prompt);
        },
      ),
    );
  });

  it('nothing reported is no counts, never zeros', () => {
    expect(tokenCounts({})).toBeUndefined();
  });
});
