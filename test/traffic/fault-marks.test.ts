// How the Traffic view and the detail panel mark an injected answer and a
// cassette miss (extension/traffic/traffic-marks.ts, fault-overview.ts), and
// that the panel's new rows escape what the proxy, a client or a rule says.
import { describe, expect, it } from 'vitest';
import { detailHtml } from '../../extension/traffic/detail-html.js';
import { faultLabel, faultSentence, missMessage } from '../../extension/traffic/traffic-marks.js';
import { isCassetteMiss } from '../../rules/cassettes/cassette-exchange.js';
import type { FaultVerdict, InjectedFault } from '../../core/fault.js';
import type { TrafficRecord } from '../../core/record.js';
import { bareRecord } from '../kit/records.js';

const evil = `<img src=x onerror="alert(1)">`;
const fault: InjectedFault = { ruleId: 3, rule: `429 retry-after=2 model=${evil}`, kind: '429', retryAfterS: 2 };

function entry(over: Partial<TrafficRecord>, responseBody?: string) {
  return {
    seq: 1,
    record: bareRecord({
      time: '2026-11-28T06:00:00.000Z',
      id: 'aaaaaaaa-1111-4222-8333-444444444444',
      path: '/v1/messages',
      canonicalPath: '/v1/messages',
      stream: false,
      status: 429,
      ...over,
    }),
    responseBody,
  };
}

const page = (e: ReturnType<typeof entry>, faultReport?: { verdict?: FaultVerdict; problem?: string }) =>
  detailHtml(e, { nonce: 'N', cspSource: 'vscode-resource:', scriptUri: 'vscode-resource:/p.js', faultReport });

function overview(html: string): string {
  return html.slice(html.indexOf('id="panel-overview"'), html.indexOf('id="panel-conversation"'));
}

describe('the marks', () => {
  it('label an injected answer by its kind, mid-stream faults with the event they cut at', () => {
    expect(faultLabel(fault)).toBe('fault 429');
    expect(faultLabel({ ruleId: 1, rule: 'cut events=3', kind: 'cut', afterEvents: 3 })).toBe('fault cut@3');
    expect(faultSentence(fault)).toBe(
      `Loopgate injected 429 (rule #3: 429 retry-after=2 model=${evil}), retry-after 2 s.`,
    );
    expect(faultSentence({ ruleId: 2, rule: 'ws-close', kind: 'ws-close', afterEvents: 1, closeCode: 1011 })).toBe(
      'Loopgate injected ws-close (rule #2: ws-close), after 1 event, close code 1011.',
    );
  });

  it('know a cassette miss by its code, or (Anthropic’s envelope has none) by the replay header', () => {
    expect(isCassetteMiss({ errorCode: 'cassette_miss' })).toBe(true);
    expect(isCassetteMiss({ diagnosis: 'cassette-miss' })).toBe(true);
    expect(isCassetteMiss({ cassetteMiss: 'messages.0.content' })).toBe(true);
    expect(isCassetteMiss({ errorCode: 'x', responseHeaders: { 'x-loopgate-cassette': 'miss' } })).toBe(true);
    expect(isCassetteMiss({ errorCode: 'x', responseHeaders: { 'x-loopgate-cassette': 'replayed' } })).toBe(false);
    expect(missMessage('{"type":"error","error":{"message":"no recording"}}')).toBe('no recording');
    expect(missMessage('not json')).toBeUndefined();
  });
});

describe('the detail panel', () => {
  const verdict: FaultVerdict = {
    id: 'aaaaaaaa-1111-4222-8333-444444444444',
    time: '2026-11-28T06:00:00.000Z',
    fault,
    path: '/v1/messages',
    attempts: [{ id: 'bbbbbbbb-1111-4222-8333-444444444444', time: 't', status: 200, waitedMs: 2031, model: evil }],
    retried: true,
    retries: 1,
    firstWaitMs: 2031,
    honouredRetryAfter: true,
    succeeded: true,
    succeededId: 'bbbbbbbb-1111-4222-8333-444444444444',
    tokensSpent: { input: 0, output: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 } as FaultVerdict['tokensSpent'],
    settled: true,
    summary: `retried once after 2.03 s (retry-after 2 s: honoured), then succeeded ${evil}`,
  };

  it('shows the injected fault and the verdict, each retry a link to its request, all of it escaped', () => {
    const o = overview(page(entry({ fault }), { verdict }));
    expect(o).toContain('Injected fault');
    expect(o).toContain('Loopgate injected 429 (rule #3: 429 retry-after=2 model=&#60;img');
    expect(o).toContain('retried once after 2.03 s (retry-after 2 s: honoured), then succeeded');
    expect(o).toContain('data-open="bbbbbbbb-1111-4222-8333-444444444444"');
    expect(o).toMatch(/200 after 2\.03 s/);
    expect(o).not.toContain('<img');
  });

  it('says why there is no verdict, and says nothing of faults on a plain request', () => {
    expect(overview(page(entry({ fault }), { problem: 'The proxy’s fault report could not be read (x).' }))).toContain(
      'could not be read (x).',
    );
    expect(overview(page(entry({ fault }), {}))).toContain('Not in the proxy’s fault report');
    const plain = overview(page(entry({ status: 200 })));
    expect(plain).not.toContain('Injected fault');
    expect(plain).not.toContain('What the client did');
    expect(plain).not.toContain('Cassette');
  });

  it('shows a cassette miss with the replay server’s differences, escaped', () => {
    const body = JSON.stringify({
      error: { message: `no recording matches POST /v1/messages: messages.0.content: recorded "hi", sent "${evil}"` },
    });
    const o = overview(
      page(entry({ status: 400, diagnosis: 'cassette-miss', cassetteMiss: `messages.0.content ${evil}` }, body)),
    );
    expect(o).toContain('No recording matched: nothing went upstream.');
    expect(o).toContain('First difference: <code>messages.0.content &#60;img');
    expect(o).toContain('messages.0.content: recorded &#34;hi&#34;, sent &#34;&#60;img');
    expect(o).not.toContain('<img');
  });

  it('offers Save as Fixture among the panel’s actions', () => {
    expect(page(entry({ status: 200 }))).toContain('data-action="saveFixture"');
  });
});
