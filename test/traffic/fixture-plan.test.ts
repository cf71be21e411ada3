// Save as Fixture's decisions (extension/traffic/fixture-plan.ts): which
// requests become cassette exchanges and why the others are left out, the
// second scrub of the secrets this machine knows, loopgate.json's ignore paths
// in the key, and the sentence the notification shows.
import { describe, expect, it } from 'vitest';
import { describeSaved, planFixtures } from '../../extension/traffic/fixture-plan.js';
import { CASSETTE_MARK } from '../../core/cassette.js';
import type { TrafficDetail } from '../../core/local-api.js';
import type { TrafficRecord } from '../../core/record.js';
import { matchKey } from '../../rules/cassettes/cassette-match.js';
import { exchangeOf } from '../../rules/cassettes/cassette-exchange.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import { bareRecord } from '../kit/records.js';

const now = new Date('2026-11-28T06:00:00.000Z');

function entry(id: string, over: Partial<TrafficRecord> = {}, body?: Partial<TrafficDetail>): TrafficDetail {
  const record = bareRecord({
    time: '2026-11-28T05:59:00.000Z',
    id,
    model: 'gpt-4o-mini',
    stream: false,
    totalMs: 5,
    requestHeaders: { 'content-type': 'application/json' },
    responseHeaders: { 'content-type': 'application/json', date: 'x', 'x-loopgate-request-id': id },
    ...over,
  });
  return {
    seq: 1,
    record,
    requestBody: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hi from ${id}` }] }),
    responseBody: JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'hello' } }] }),
    ...body,
  };
}

describe('planFixtures', () => {
  it('makes a cassette exchange of a whole JSON answer, keyed as a replay looks it up', () => {
    const plan = planFixtures([{ id: 'a', entry: entry('a') }], { now });
    expect(plan.leftOut).toEqual([]);
    const x = plan.exchanges[0]!.exchange;
    expect(x[CASSETTE_MARK]).toBe(1);
    expect(x.recorded).toBe(now.toISOString());
    expect(x.request).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(x.key).toBe(matchKey('POST', '/v1/chat/completions', x.request.body));
    expect(x.response.status).toBe(200);
    // What describes this connection or this proxy's run is not recorded.
    expect(Object.keys(x.response.headers)).toEqual(['content-type']);
  });

  it('keeps a stream event by event with its times', () => {
    const sse = 'data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n';
    const e = entry('s', { stream: true, responseHeaders: { 'content-type': 'text/event-stream' } });
    const plan = planFixtures([{ id: 's', entry: { ...e, responseBody: sse, eventTimes: [10, 25, 30] } }], { now });
    expect(plan.exchanges[0]!.exchange.response.events).toEqual([
      { at: 10, data: 'data: {"a":1}' },
      { at: 25, data: 'data: {"a":2}' },
      { at: 30, data: 'data: [DONE]' },
    ]);
  });

  it('leaves out, each with its reason: a body over the ring cap, an injected fault, a cassette miss, a WebSocket, one gone', () => {
    const plan = planFixtures(
      [
        { id: 'big', entry: entry('big', {}, { requestBody: undefined, requestBodyNote: 'streamed' }) },
        {
          id: 'fault',
          entry: entry('fault', {
            status: 429,
            fault: { ruleId: 1, rule: '429 retry-after=2', kind: '429', retryAfterS: 2 },
          }),
        },
        { id: 'miss', entry: entry('miss', { status: 400, errorCode: 'cassette_miss' }) },
        {
          id: 'miss-anthropic',
          entry: entry('miss-anthropic', {
            status: 400,
            errorCode: 'invalid_request_error',
            responseHeaders: { 'x-loopgate-cassette': 'miss' },
          }),
        },
        { id: 'ws', entry: entry('ws', { websocket: {} as TrafficRecord['websocket'] }) },
        { id: 'gone', problem: 'Request gone is no longer in the proxy’s memory.' },
        { id: 'ok', entry: entry('ok') },
      ],
      { now },
    );
    expect(plan.exchanges.map((x) => x.id)).toEqual(['ok']);
    expect(Object.fromEntries(plan.leftOut.map((l) => [l.id, l.reason]))).toEqual({
      big: 'a body was over the 1 MiB the ring keeps, so it cannot be replayed whole',
      fault: 'the proxy injected this answer (fault 429, --fault), not the upstream',
      miss: 'a cassette miss: the replay answered it, not an upstream',
      'miss-anthropic': 'a cassette miss: the replay answered it, not an upstream',
      ws: 'the WebSocket upgrade was refused: nothing to replay',
      gone: 'Request gone is no longer in the proxy’s memory.',
    });
  });

  it('scrubs the secrets this machine knows a second time, and keys the exchange on what is left', () => {
    const key = 'sk-canary-0123456789abcdefghijklmnopqrstuv';
    const token = 'lg-local-token-canary-0123456789';
    const e = entry(
      'k',
      {},
      {
        requestBody: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `${key} ${token}` }] }),
        responseBody: JSON.stringify({ echo: Buffer.from(key).toString('base64') }),
      },
    );
    const redactor = createRedactor({ secrets: [key, token] });
    const plan = planFixtures([{ id: 'k', entry: e }], { now, scrub: (t) => redactor.knownSecrets(t) });
    const x = plan.exchanges[0]!.exchange;
    const text = JSON.stringify(x);
    for (const s of [key, token, Buffer.from(key).toString('base64')]) expect(text).not.toContain(s);
    expect(text).toContain('[REDACTED:');
    expect(x.key).toBe(matchKey('POST', '/v1/chat/completions', x.request.body));
    // Without the scrub the key would have been made from the body with the secret in it.
    expect(x.key).not.toBe(planFixtures([{ id: 'k', entry: e }], { now }).exchanges[0]!.exchange.key);
  });
});

describe('the match key', () => {
  it('leaves out the project’s ignore paths, as a replay with the same loopgate.json does', () => {
    const match = { ignore: ['messages.0.content'] };
    const x = planFixtures([{ id: 'a', entry: entry('a') }], { now, match }).exchanges[0]!.exchange;
    const other = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'anything else' }] };
    expect(x.key).toBe(matchKey('POST', '/v1/chat/completions', other, match));
    expect(x.key).not.toBe(matchKey('POST', '/v1/chat/completions', x.request.body));
  });
});

describe('describeSaved', () => {
  const short = (id: string) => id.slice(0, 4);
  it('says what was written and what was left out, and why', () => {
    const plan = planFixtures(
      [
        { id: 'aaaa1111', entry: entry('aaaa1111') },
        { id: 'bbbb2222', problem: 'gone' },
      ],
      { now },
    );
    expect(describeSaved(plan, 'cassettes', short)).toBe(
      'Saved 1 request as a cassette exchange in cassettes; left out 1: bbbb (gone).',
    );
    expect(describeSaved({ exchanges: [], leftOut: [] }, 'c', short)).toBe('Nothing saved in c.');
  });
});

describe('exchangeOf, the one conversion serve --record, show --save and Save as Fixture share', () => {
  const skipOf = (e: TrafficDetail) => {
    const x = exchangeOf(e.record, e, {}, now);
    return 'skip' in x ? x.skip : undefined;
  };

  it('leaves out what the upstream never said: an injected fault, a cassette miss in either dialect', () => {
    expect(skipOf(entry('ok'))).toBeUndefined();
    const fault = { ruleId: 1, rule: '429 retry-after=2', kind: '429' as const, retryAfterS: 2 };
    expect(skipOf(entry('f', { status: 429, fault }))).toMatch(/injected this answer \(fault 429/);
    // A mid-stream fault ends in a 200: the status alone would record a cut stream as the service's answer.
    expect(skipOf(entry('c', { status: 200, stream: true, fault: { ...fault, kind: 'cut', afterEvents: 2 } }))).toMatch(
      /fault cut/,
    );
    expect(skipOf(entry('m1', { status: 400, errorCode: 'cassette_miss' }))).toMatch(/cassette miss/);
    expect(skipOf(entry('m2', { status: 400, cassetteMiss: 'messages.0.content' }))).toMatch(/cassette miss/);
    const anthropicMiss = entry('m3', {
      status: 400,
      errorCode: 'invalid_request_error',
      responseHeaders: { 'content-type': 'application/json', 'x-loopgate-cassette': 'miss' },
    });
    expect(skipOf(anthropicMiss)).toMatch(/cassette miss/);
  });
});
