// The fault report (issue 34 §2, §3) with the official SDKs' own retry logic:
// a fault is armed through the local API, the SDK meets it and does what it
// does, and GET /_loopgate/faults says what that was. The client's own view is
// measured too (a fetch wrapper notes when each request left and each answer
// ended), so the wait the report gives is checked against the wait the SDK made.
// Nothing sleeps: the report is polled with a deadline.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { localApi } from '../../client/local-api-client.js';
import type { FaultVerdict } from '../../core/fault.js';
import { RETRY_AFTER_ALLOWANCE_MS } from '../../rules/faults/fault-report.js';
import { KEYS, startStack, TOKEN, untilAsync, type Stack, namedKeys } from './stack.js';
import { CHAT_429_RETRIED_ONCE_HONOURED } from '../kit/fault-verdicts.js';

/** Short, so a client that gave up is settled within a test (the default is 60 s). */
const QUIET_MS = 1500;

let stack: Stack;
const api = () => localApi({ url: stack.proxy.url, token: TOKEN });

beforeAll(async () => {
  stack = await startStack({
    keys: namedKeys({ default: KEYS.default, claude: KEYS.claude }),
    faultQuietMs: QUIET_MS,
  });
});
afterAll(async () => stack?.close());
afterEach(async () => {
  await api().disarmFaults();
});

/** What the client saw: when each request left and when its answer was read to the end (ms, Date.now()). */
interface Exchange {
  sent: number;
  ended: number;
  status: number;
}

/** A fetch that notes each exchange's times; the body is read here, so `ended` is when the client had it all. */
function timedFetch(log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const sent = Date.now();
    const res = await fetch(input, init);
    const body = await res.arrayBuffer();
    log.push({ sent, ended: Date.now(), status: res.status });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

function openai(log: Exchange[], maxRetries: number): OpenAI {
  return new OpenAI({ baseURL: `${stack.proxy.url}/v1`, apiKey: TOKEN, maxRetries, fetch: timedFetch(log) });
}

function anthropic(log: Exchange[], maxRetries: number): Anthropic {
  return new Anthropic({ baseURL: stack.proxy.url, apiKey: TOKEN, maxRetries, fetch: timedFetch(log) });
}

/** The verdict on the fault this rule injected, once `done` says it has got that far. */
async function verdictFor(ruleId: number, done: (v: FaultVerdict) => boolean, what: string): Promise<FaultVerdict> {
  return untilAsync(
    async () => (await api().faults()).report.find((v) => v.fault.ruleId === ruleId && done(v)),
    15_000,
    what,
  );
}

/** The client's own wait between the first answer's end and the retry's start. */
/**
 * How far the proxy's measured wait may be from the client's own: the two ends of one socket, each on a busy event
 * loop (50 ms apart at most with one vitest worker; more with two on two cores).
 */
const WAIT_AGREEMENT_MS = 250;

function clientWait(log: Exchange[]): number {
  expect(log.length).toBeGreaterThanOrEqual(2);
  return log[1]!.sent - log[0]!.ended;
}

describe('the fault report, with the SDKs retrying as they do', () => {
  it('openai: a 429 with retry-after 1 s is retried once after >= 1 s, honoured, then succeeds', async () => {
    const { armed } = await api().armFault({
      rule: '429 times=1 retry-after=1 model=gpt-4.1 path=/v1/chat/completions',
    });
    const log: Exchange[] = [];
    const answer = await openai(log, 2).chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'fault report: openai 429' }],
    });
    expect(answer.choices[0]?.message.content).toBeTruthy();
    const v = await verdictFor(armed.id, (x) => x.settled, 'the 429 verdict');
    expect(v).toMatchObject(CHAT_429_RETRIED_ONCE_HONOURED);
    expect(v.firstWaitMs).toBeGreaterThanOrEqual(1000 - RETRY_AFTER_ALLOWANCE_MS);
    expect(log.map((e) => e.status)).toEqual([429, 200]);
    // The proxy's figure is the SDK's wait seen from the other end of the socket.
    expect(Math.abs(v.firstWaitMs! - clientWait(log))).toBeLessThan(WAIT_AGREEMENT_MS);
    expect(v.succeededId).toBe(v.attempts[0]!.id);
    expect(v.summary).toMatch(/^retried once after 1\.\d\d s \(retry-after 1 s: honoured\), then succeeded$/);
    console.log(`openai 429 retry-after 1 s: report ${v.firstWaitMs} ms, client ${clientWait(log)} ms`);
  });

  it('anthropic: a 529 with retry-after 1 s is retried once after >= 1 s, honoured, then succeeds', async () => {
    const { armed } = await api().armFault({ rule: '529 times=1 retry-after=1 model=claude-sonnet-4-6' });
    const log: Exchange[] = [];
    const answer = await anthropic(log, 2).messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 32,
      messages: [{ role: 'user', content: 'fault report: anthropic 529' }],
    });
    expect(answer.content.length).toBeGreaterThan(0);
    const v = await verdictFor(armed.id, (x) => x.settled, 'the 529 verdict');
    expect(v).toMatchObject({
      fault: { kind: '529', retryAfterS: 1 },
      path: '/v1/messages',
      retries: 1,
      honouredRetryAfter: true,
      succeeded: true,
    });
    expect(v.firstWaitMs).toBeGreaterThanOrEqual(1000 - RETRY_AFTER_ALLOWANCE_MS);
    expect(log.map((e) => e.status)).toEqual([529, 200]);
    expect(Math.abs(v.firstWaitMs! - clientWait(log))).toBeLessThan(WAIT_AGREEMENT_MS);
    console.log(`anthropic 529 retry-after 1 s: report ${v.firstWaitMs} ms, client ${clientWait(log)} ms`);
  });

  it("openai: a 500 without retry-after is retried after the SDK's own backoff, which the report gives", async () => {
    const { armed } = await api().armFault({ rule: '500 times=2 model=gpt-5-mini' });
    const log: Exchange[] = [];
    await openai(log, 3).chat.completions.create({
      model: 'gpt-5-mini',
      messages: [{ role: 'user', content: 'fault report: openai 500' }],
    });
    // The first fault's verdict: a failed retry (the second fault), then a success.
    const first = await verdictFor(armed.id, (x) => x.succeeded && x.retries === 2, 'the first 500 verdict');
    expect(first).toMatchObject({ retries: 2, succeeded: true, settled: true });
    expect(first.honouredRetryAfter).toBeUndefined();
    expect(first.attempts.map((a) => a.status)).toEqual([500, 200]);
    expect(log.map((e) => e.status)).toEqual([500, 500, 200]);
    // openai-node: 0.5 s × 2^n, less up to 25 % jitter.
    expect(first.firstWaitMs).toBeGreaterThanOrEqual(375 - RETRY_AFTER_ALLOWANCE_MS);
    expect(first.firstWaitMs).toBeLessThan(1000);
    expect(Math.abs(first.firstWaitMs! - clientWait(log))).toBeLessThan(WAIT_AGREEMENT_MS);
    expect(first.attempts[1]!.waitedMs).toBeGreaterThanOrEqual(750 - RETRY_AFTER_ALLOWANCE_MS);
    expect(first.summary).toMatch(
      /^retried twice, first after 0\.\d\d s \(no retry-after: its own backoff\), then succeeded$/,
    );
    console.log(`openai 500 backoff: report ${first.firstWaitMs} ms then ${first.attempts[1]!.waitedMs} ms`);
  });

  it('maxRetries 0: not retried, not succeeded, and settled once the quiet time has passed', async () => {
    const { armed } = await api().armFault({ rule: '429 times=1 retry-after=1 model=o4-mini' });
    const log: Exchange[] = [];
    const error = await openai(log, 0)
      .chat.completions.create({ model: 'o4-mini', messages: [{ role: 'user', content: 'fault report: give up' }] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const early = await verdictFor(armed.id, () => true, 'the verdict');
    expect(early).toMatchObject({ retried: false, succeeded: false });
    const faultAt = Date.parse(early.time);
    const v = await verdictFor(armed.id, (x) => x.settled, 'the settled verdict');
    expect(v).toMatchObject({ retried: false, retries: 0, succeeded: false, settled: true, summary: 'not retried' });
    expect(v.honouredRetryAfter).toBeUndefined();
    // Settled no sooner than the quiet time plus the retry-after after the answer.
    expect(Date.now() - faultAt).toBeGreaterThanOrEqual(QUIET_MS + 1000);
    expect(log.map((e) => e.status)).toEqual([429]);
  });

  it('a client that falls back to another model: switchedModel', async () => {
    const { armed } = await api().armFault({ rule: '503 times=5 model=gpt-6.1-sol' });
    const client = openai([], 0);
    const messages = [{ role: 'user' as const, content: 'fault report: fall back' }];
    let answer;
    for (const model of ['gpt-6.1-sol', 'qwen3.7-max']) {
      try {
        answer = await client.chat.completions.create({ model, messages });
        break;
      } catch (e) {
        if (!(e instanceof OpenAI.APIError) || e.status !== 503) throw e;
      }
    }
    expect(answer?.model).toBeTruthy();
    const v = await verdictFor(armed.id, (x) => x.succeeded, 'the fallback verdict');
    expect(v).toMatchObject({
      model: 'gpt-6.1-sol',
      switchedModel: 'qwen3.7-max',
      retries: 1,
      succeeded: true,
    });
    expect(v.summary).toContain('switched model gpt-6.1-sol → qwen3.7-max, then succeeded');
    console.log(`fallback: ${v.summary}`);
  });

  it("a stream cut midway, retried by the caller: the cut answer's tokens are what the failure cost", async () => {
    const { armed } = await api().armFault({ rule: 'cut events=4 times=1 model=claude-haiku-4-5' });
    const client = anthropic([], 0);
    const ask = async () => {
      const stream = client.messages.stream({
        model: 'claude-haiku-4-5',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'fault report: a cut stream, then again' }],
      });
      return stream.finalMessage();
    };
    // The SDK does not retry a stream that broke after it began: the caller does.
    const first = await ask().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(first).toBeInstanceOf(Error);
    await ask();
    const v = await verdictFor(armed.id, (x) => x.succeeded, 'the cut verdict');
    expect(v).toMatchObject({ fault: { kind: 'cut', afterEvents: 4 }, retries: 1, succeeded: true, settled: true });
    // message_start carries the prompt's usage: the cut answer used its input tokens.
    expect(v.tokensSpent.input + v.tokensSpent.cacheRead + v.tokensSpent.cacheWrite5m).toBeGreaterThan(0);
    expect(v.summary).toMatch(/tokens .*spent on failed answers$/);
    console.log(`anthropic cut after 4 events: ${v.summary}`);
  });
});
