// x-sim-fault and x-sim-chunk-delay-ms, observed through the real SDK clients.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { KEYS, anthropic, hello, openai, rejection, start } from './helpers.js';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

const fault = (f: string, extra: Record<string, string> = {}) => ({ headers: { 'x-sim-fault': f, ...extra } });

describe('status faults', () => {
  const rows = [
    ['500', OpenAI.InternalServerError, 'server_error', 'api_error'],
    ['502', OpenAI.InternalServerError, 'bad_gateway', 'api_error'],
    ['503', OpenAI.InternalServerError, 'service_unavailable', 'overloaded_error'],
    ['429', OpenAI.RateLimitError, 'rate_limit_exceeded', 'rate_limit_error'],
  ] as const;
  for (const [f, cls, code, anthropicType] of rows) {
    it(`x-sim-fault: ${f} on every route`, async () => {
      const calls = [
        () => openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello }, fault(f)),
        () => openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello, stream: true }, fault(f)),
        () => openai(sim).responses.create({ model: 'gpt-4o-mini', input: 'hi' }, fault(f)),
        () => openai(sim).models.list(fault(f)),
      ];
      for (const call of calls) {
        const err = await rejection(call());
        expect(err).toBeInstanceOf(cls);
        expect(err.status).toBe(Number(f));
        expect(err.code).toBe(code);
        if (f === '429') expect(err.headers.get('retry-after')).toBe('1');
      }
      const a = await rejection(
        anthropic(sim).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 9, messages: hello }, fault(f)),
      );
      expect(a).toBeInstanceOf(f === '429' ? Anthropic.RateLimitError : Anthropic.InternalServerError);
      expect(a.error.error.type).toBe(anthropicType);
    });
  }
});

describe('stalls', () => {
  it('stall-headers: no answer until the client gives up', async () => {
    sim.clearRequests();
    const t0 = Date.now();
    const err = await rejection(
      openai(sim, KEYS.main, { timeout: 300 }).chat.completions.create(
        { model: 'gpt-4o-mini', messages: hello },
        fault('stall-headers'),
      ),
    );
    expect(err).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(sim.requests.at(-1)?.status).toBe(0);
    const a = await rejection(
      anthropic(sim, KEYS.claude, { timeout: 300 }).messages.create(
        { model: 'claude-sonnet-4-6', max_tokens: 9, messages: hello },
        fault('stall-headers'),
      ),
    );
    expect(a).toBeInstanceOf(Anthropic.APIConnectionTimeoutError);
  });

  it('stall-body on a stream: the first event arrives, then nothing', async () => {
    const ac = new AbortController();
    const stream = await openai(sim).chat.completions.create(
      { model: 'gpt-4o-mini', messages: hello, stream: true },
      { ...fault('stall-body'), signal: ac.signal },
    );
    const got: unknown[] = [];
    let timer: NodeJS.Timeout | undefined;
    const t0 = Date.now();
    for await (const chunk of stream) {
      got.push(chunk);
      timer ??= setTimeout(() => ac.abort(), 300);
    }
    clearTimeout(timer);
    expect(got.length).toBe(1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(ac.signal.aborted).toBe(true);
  });

  it('stall-body on a JSON reply: headers arrive, the body never completes', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    const timer = setTimeout(() => ac.abort(), 300);
    const err = await rejection(
      openai(sim).chat.completions.create(
        { model: 'gpt-4o-mini', messages: hello },
        { ...fault('stall-body'), signal: ac.signal },
      ),
    );
    clearTimeout(timer);
    expect(err.name).toMatch(/Abort/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(sim.requests.at(-1)?.status).toBe(200);
  });

  it('responses and messages stall-body also deliver exactly one event', async () => {
    /** The event types a stream delivered until 200 ms after its last one (the stall), then aborted. */
    const beforeTheStall = async (open: (signal: AbortSignal) => Promise<AsyncIterable<{ type: string }>>) => {
      const ac = new AbortController();
      const types: string[] = [];
      for await (const ev of await open(ac.signal)) {
        types.push(ev.type);
        setTimeout(() => ac.abort(), 200);
      }
      return types;
    };
    expect(
      await beforeTheStall((signal) =>
        openai(sim).responses.create(
          { model: 'gpt-4o-mini', input: 'hi', stream: true },
          { ...fault('stall-body'), signal },
        ),
      ),
    ).toEqual(['response.created']);
    expect(
      await beforeTheStall((signal) =>
        anthropic(sim).messages.create(
          { model: 'claude-sonnet-4-6', max_tokens: 9, messages: hello, stream: true },
          { ...fault('stall-body'), signal },
        ),
      ),
    ).toEqual(['message_start']);
  });
});

describe('resets', () => {
  it('reset-before-headers: a connection error, not a response', async () => {
    const err = await rejection(
      openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello }, fault('reset-before-headers')),
    );
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    const a = await rejection(
      anthropic(sim).messages.create(
        { model: 'claude-sonnet-4-6', max_tokens: 9, messages: hello },
        fault('reset-before-headers'),
      ),
    );
    expect(a).toBeInstanceOf(Anthropic.APIConnectionError);
    expect(sim.requests.at(-1)?.status).toBe(0);
  });

  it('reset-mid-stream: some events, then the stream errors instead of ending cleanly', async () => {
    const stream = await openai(sim).chat.completions.create(
      { model: 'gpt-4o-mini', messages: hello, stream: true },
      fault('reset-mid-stream'),
    );
    const got: unknown[] = [];
    const err = await rejection(
      (async () => {
        for await (const chunk of stream) got.push(chunk);
      })(),
    );
    expect(err).toBeInstanceOf(Error);
    expect(got.length).toBe(3);
    await expect(
      openai(sim).responses.stream({ model: 'gpt-4o-mini', input: 'hi' }, fault('reset-mid-stream')).finalResponse(),
    ).rejects.toThrow();
    await expect(
      anthropic(sim)
        .messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 9, messages: hello }, fault('reset-mid-stream'))
        .finalMessage(),
    ).rejects.toThrow();
  });

  it('reset-mid-stream on a JSON reply: the body is cut', async () => {
    const err = await rejection(
      openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello }, fault('reset-mid-stream')),
    );
    expect(err).toBeInstanceOf(Error);
  });
});

describe('error-event-mid-stream', () => {
  it('chat: an error chunk after a few events raises APIError', async () => {
    const stream = await openai(sim).chat.completions.create(
      { model: 'gpt-4o-mini', messages: hello, stream: true },
      fault('error-event-mid-stream'),
    );
    let n = 0;
    const err = await rejection(
      (async () => {
        for await (const _ of stream) n++;
      })(),
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.code).toBe('server_error');
    expect(n).toBe(3);
  });

  it('responses: the error event raises APIError from the stream helper', async () => {
    const err = await rejection(
      openai(sim)
        .responses.stream({ model: 'gpt-4o-mini', input: 'hi' }, fault('error-event-mid-stream'))
        .finalResponse(),
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.code).toBe('server_error');
  });

  it('messages: the error event raises APIError with the Anthropic type', async () => {
    const err = await rejection(
      anthropic(sim)
        .messages.stream(
          { model: 'claude-sonnet-4-6', max_tokens: 9, messages: hello },
          fault('error-event-mid-stream'),
        )
        .finalMessage(),
    );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.error.error.type).toBe('api_error');
  });

  it('on a non-stream request it is a 500', async () => {
    const err = await rejection(
      openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello }, fault('error-event-mid-stream')),
    );
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
  });
});

describe('shaping headers', () => {
  it('x-sim-chunk-delay-ms spaces the events', async () => {
    const stream = await openai(sim).chat.completions.create(
      { model: 'gpt-4o-mini', messages: hello, stream: true },
      { headers: { 'x-sim-chunk-delay-ms': '60', 'x-sim-chunks': '4' } },
    );
    const times: number[] = [];
    for await (const _ of stream) times.push(Date.now());
    // role chunk + 4 text chunks + finish chunk: 5 gaps of 60 ms
    expect(times.length).toBe(6);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(5 * 60 - 15);
  });

  it('a bad x-sim-* value is a 400 naming the header', async () => {
    const err = await rejection(
      openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello }, fault('explode')),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('x-sim-fault');
    const e2 = await rejection(
      openai(sim).chat.completions.create(
        { model: 'gpt-4o-mini', messages: hello },
        { headers: { 'x-sim-chunks': '-3' } },
      ),
    );
    expect(e2.param).toBe('x-sim-chunks');
  });

  it('close() ends at once with stalled and slow connections open', async () => {
    const own = await start();
    const ac = new AbortController();
    const stalled = openai(own)
      .chat.completions.create(
        { model: 'gpt-4o-mini', messages: hello },
        { ...fault('stall-headers'), signal: ac.signal },
      )
      .catch((e: unknown) => e);
    const slow = await openai(own).chat.completions.create(
      { model: 'gpt-4o-mini', messages: hello, stream: true },
      { headers: { 'x-sim-chunk-delay-ms': '60000' } },
    );
    const it = slow[Symbol.asyncIterator]();
    await it.next();
    const deadline = Date.now() + 5000;
    while (own.requests.length < 2 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    const t0 = Date.now();
    await own.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(await stalled).toBeInstanceOf(Error);
    await expect(it.next()).rejects.toThrow();
    ac.abort();
  });
});

describe('connection faults on every endpoint and stream mode', () => {
  const calls: Array<[string, (f: string, timeout: number) => Promise<unknown>]> = [
    [
      'chat',
      (f, timeout) =>
        openai(sim, KEYS.main, { timeout }).chat.completions.create(
          { model: 'gpt-4o-mini', messages: hello },
          fault(f),
        ),
    ],
    [
      'chat stream',
      (f, timeout) =>
        openai(sim, KEYS.main, { timeout }).chat.completions.create(
          { model: 'gpt-4o-mini', messages: hello, stream: true },
          fault(f),
        ),
    ],
    [
      'responses',
      (f, timeout) =>
        openai(sim, KEYS.main, { timeout }).responses.create({ model: 'gpt-4o-mini', input: 'hi' }, fault(f)),
    ],
    [
      'responses stream',
      (f, timeout) =>
        openai(sim, KEYS.main, { timeout }).responses.create(
          { model: 'gpt-4o-mini', input: 'hi', stream: true },
          fault(f),
        ),
    ],
    ['models', (f, timeout) => openai(sim, KEYS.main, { timeout }).models.list(fault(f))],
    [
      'messages',
      (f, timeout) =>
        anthropic(sim, KEYS.claude, { timeout }).messages.create(
          { model: 'claude-haiku-4-5', max_tokens: 9, messages: hello },
          fault(f),
        ),
    ],
    [
      'messages stream',
      (f, timeout) =>
        anthropic(sim, KEYS.claude, { timeout }).messages.create(
          { model: 'claude-haiku-4-5', max_tokens: 9, messages: hello, stream: true },
          fault(f),
        ),
    ],
  ];
  for (const [name, call] of calls) {
    it(`${name}: stall-headers times out, reset-before-headers is a connection error`, async () => {
      const stalled = await rejection(call('stall-headers', 150));
      expect(stalled.constructor.name).toBe('APIConnectionTimeoutError');
      const reset = await rejection(call('reset-before-headers', 5000));
      expect(reset.constructor.name).toBe('APIConnectionError');
      const status = await rejection(call('503', 5000));
      expect(status.status).toBe(503);
    });
  }
});
