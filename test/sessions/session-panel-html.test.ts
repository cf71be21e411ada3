// The session panel's HTML (issue 33 §5) is built from what clients and
// upstreams sent: client and model names, key names, cache-miss causes,
// context labels. Every one must arrive as text; the page loads nothing but
// its own script; a session without a price says "no price", never $0.00;
// the charts draw each turn that is in memory.
import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../core/agent-session.js';
import type { SessionDetailAnswer, SessionTurn } from '../../core/local-api.js';
import { sessionContent, sessionErrorHtml, sessionHtml } from '../../extension/sessions/session-html.js';
import { niceMax, turnPoints } from '../../extension/sessions/session-charts.js';
import { tokenCounts } from '../kit/records.js';

const evil = `<img src=x onerror="alert(1)"><script>alert(2)</script>'"&`;
const opts = {
  nonce: 'NONCE123',
  cspSource: 'vscode-resource:',
  scriptUri: 'vscode-resource:/ext/dist/session-page.js',
};
const now = new Date('2026-11-28T03:00:00.000Z');

function summary(over: Partial<SessionSummary> = {}): SessionSummary {
  return {
    id: `s-${evil}`,
    source: 'header',
    client: evil,
    agents: [evil],
    run: { tool: evil, started: '2026-11-28T02:50:00.000Z' },
    started: '2026-11-28T02:50:00.000Z',
    lastSeen: '2026-11-28T02:55:00.000Z',
    durationMs: 300_000,
    requests: 4,
    turns: 3,
    errors: 1,
    retries: 2,
    models: [evil, 'claude-sonnet-4-6'],
    keys: [evil],
    routes: [evil],
    tokens: {
      input: 300,
      output: 90,
      cacheRead: 2400,
      cacheWrite5m: 1200,
      cacheWrite1h: 0,
      reasoning: 0,
      cacheWrite: 1200,
    },
    cost: { estimated: 0.0123, currency: 'USD', unpriced: 1 },
    costNote: `Add it to loopgate.json: "prices": { ${evil} }`,
    cacheHitRatio: 0.6,
    rateLimit: {
      style: 'anthropic',
      requests: { limit: 50, remaining: 4, reset: '2026-11-28T03:01:00.000Z' },
      tokens: { limit: 100_000, remaining: 80_000, reset: '2026-11-28T03:01:00.000Z' },
      seenAt: '2026-11-28T02:55:00.000Z',
    },
    ...over,
  };
}

const k = (input: number, cacheRead: number, cacheWrite5m: number, output: number) =>
  tokenCounts({ input, output, cacheRead, cacheWrite5m });

function turns(): SessionTurn[] {
  return [
    {
      seq: 1,
      id: 'req-1',
      time: '2026-11-28T02:50:00.000Z',
      model: evil,
      status: 200,
      tokens: k(100, 0, 1200, 30),
      cost: { estimated: 0.005, currency: 'USD', pricedAs: 'claude-sonnet-4-6', source: 'genai-prices' },
      cache: {
        verdict: 'miss',
        hitRatio: 0,
        cacheRead: 0,
        written: 1200,
        cause: { kind: 'first-turn' },
        summary: `0 % — ${evil}`,
      },
    },
    {
      seq: 2,
      id: 'req-2',
      time: '2026-11-28T02:52:00.000Z',
      model: 'claude-sonnet-4-6',
      status: 200,
      tokens: k(100, 1200, 0, 30),
      cost: { estimated: 0.0073, currency: 'USD', pricedAs: 'claude-sonnet-4-6', source: 'genai-prices' },
      cache: { verdict: 'hit', hitRatio: 0.92, cacheRead: 1200, written: 0, summary: '92 %' },
    },
    {
      seq: 3,
      id: `req-3${evil}`,
      time: '2026-11-28T02:55:00.000Z',
      model: 'house-model',
      status: 200,
      tokens: k(100, 1200, 0, 30),
      cost: { noPrice: `Add it to loopgate.json ${evil}` },
      cache: {
        verdict: 'partial',
        hitRatio: 0.5,
        cacheRead: 1200,
        written: 0,
        cause: { kind: 'changed', region: { part: 'system', index: 2, label: 'system block 2', pointer: '/system/2' } },
        summary: '50 % — system block 2 changed, 1,200 tokens re-written',
      },
      context: {
        total: 1300,
        exact: true,
        estimated: false,
        tokenizer: 'o200k_base',
        parts: [
          { kind: 'system', label: evil, tokens: 800 },
          { kind: 'tools', label: 'tools: mcp__github (12)', group: 'github', tokens: 400 },
          { kind: 'new-turn', label: 'new turn', tokens: 100 },
        ],
        growth: { tokens: 130, previous: { seq: 2, id: 'req-2' } },
      },
    },
  ];
}

const detail = (over: Partial<SessionSummary> = {}): SessionDetailAnswer => ({
  session: summary(over),
  seqs: [1, 2, 3],
  turns: turns(),
});

describe('the session panel HTML', () => {
  const page = sessionHtml(detail(), opts, now);

  it('escapes every value from outside (no markup or script but its own)', () => {
    expect(page).not.toContain('<img');
    expect(page).not.toContain('<script>alert');
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).toContain('<script nonce="NONCE123" src="vscode-resource:/ext/dist/session-page.js"></script>');
    expect(page).toContain('&#60;script&#62;alert(2)&#60;/script&#62;');
    // The live update carries the same escaped content.
    expect(sessionContent(detail(), now)).not.toContain('<img');
    expect(sessionErrorHtml(evil)).not.toContain('<img');
  });

  it('loads nothing: a strict CSP with a nonce, no remote URL, no inline style attribute', () => {
    expect(page).toContain(
      `content="default-src 'none'; img-src vscode-resource:; style-src 'nonce-NONCE123'; script-src 'nonce-NONCE123';"`,
    );
    expect(page).not.toMatch(/(src|href)="https?:/);
    expect(page).not.toMatch(/\sstyle="/);
    // No event-handler attribute: quoted values (escaped, so they cannot end early) taken out first.
    expect(page.replace(/"[^"]*"/g, '""')).not.toMatch(/<[^>]*\son[a-z]+=/i);
  });

  it('summarises the session: turns, duration, errors, retries, tokens, estimated cost, ratio, headroom', () => {
    expect(page).toContain('3 turns in 4 requests');
    expect(page).toContain('5 min 0 s');
    expect(page).toContain('input 300, output 90, cache read 2,400, cache write 1,200');
    expect(page).toContain('$0.0123 estimated');
    expect(page).toContain('1 request without a price, not counted');
    expect(page).toContain('60 %');
    expect(page).toContain('4 of 50 requests left, resets in 1 min 0 s (03:01:00 UTC)');
    // Only the window that runs low is in the warning colour.
    expect(page).toMatch(/<span class="warning">4 of 50 requests/);
    expect(page).toMatch(/<span class="">80,000 of 100,000 tokens/);
  });

  it('draws a bar per turn, a mark on each turn that missed, the context line and the running cost', () => {
    expect(page.match(/<g class="turn"/g)).toHaveLength(3);
    // Turn 1 wrote the cache it could not have read: a first write, no miss mark (issue 42); turn 3 missed.
    expect(page.match(/<path class="miss"/g)).toHaveLength(1);
    expect(page).toContain('cache: first write');
    expect(page.match(/<rect class="read"/g)).toHaveLength(2);
    expect(page.match(/<rect class="write"/g)).toHaveLength(1);
    expect(page).toMatch(/<polyline class="context" points="[\d., ]+"/);
    expect(page).toMatch(/<polyline class="cost" points="[\d., ]+"/);
    // The unpriced turn is hollow on the cost line and says "no price".
    expect(page).toMatch(/<circle class="dot hollow"[^>]*><title>Turn 3: no price<\/title>/);
    expect(page).toContain('$0.0123 so far (estimated)');
  });

  it("draws the session's budget cost cap as a line on the cost chart, the axis reaching it", () => {
    expect(sessionContent(detail(), now)).not.toContain('class="cap"');
    const capped = sessionContent(
      detail({ budget: { cap: { usd: 0.05 }, spent: { usd: 0.0123, tokens: 3990 }, state: 'ok' } }),
      now,
    );
    const cap =
      /<line class="cap" x1="[\d.]+" x2="[\d.]+" y1="([\d.]+)" y2="\1"><title>Session budget cap: \$0\.05<\/title>/.exec(
        capped,
      );
    expect(cap).not.toBeNull();
    expect(capped).toContain('>cap $0.05</text>');
    // Spent well under the cap: every point of the running cost lies below the line (a larger y).
    const ys = /<polyline class="cost" points="([^"]+)"/
      .exec(capped)![1]!
      .split(' ')
      .map((xy) => Number(xy.split(',')[1]));
    for (const y of ys) expect(y).toBeGreaterThan(Number(cap![1]));
    // A token cap has no place on a chart of dollars.
    const tokensOnly = sessionContent(
      detail({ budget: { cap: { tokens: 1000 }, spent: { usd: 0, tokens: 900 }, state: 'warning' } }),
      now,
    );
    expect(tokensOnly).not.toContain('class="cap"');
  });

  it('lists the cache misses with their causes and a link to each request', () => {
    expect(page).toContain('50 % — system block 2 changed, 1,200 tokens re-written');
    expect(page).toContain('data-open="req-1"');
    expect(page).toContain(`data-open="req-3&#60;img`);
  });

  it("shows what filled the last turn's context", () => {
    expect(page).toContain('tools: mcp__github (12): 400');
    expect(page).toContain('1,300 tokens (total from the usage, split by o200k_base), +130 since the turn before');
  });

  it('a session with no price says "no price" and how to add one, never $0.00', () => {
    const d = detail({
      cost: null,
      costNote: 'Add it to loopgate.json: "prices": { "house-model": "claude-sonnet-4-5" }',
    });
    d.turns = d.turns.map((t) => ({ ...t, cost: { noPrice: 'add a price' } }));
    const p = sessionHtml(d, opts, now);
    expect(p).not.toMatch(/\$0\.00/);
    expect(p).toContain('no price');
    expect(p).toContain('&#34;house-model&#34;: &#34;claude-sonnet-4-5&#34;');
    expect(p).not.toContain('class="cost"');
  });

  it("says when earlier turns have left the proxy's memory", () => {
    const p = sessionHtml({ session: summary({ requests: 10 }), seqs: [1, 2, 3], turns: turns() }, opts, now);
    expect(p).toContain("7 earlier requests are no longer in the proxy's memory");
  });
});

describe('chart rules', () => {
  it('ends an axis on a round figure', () => {
    expect([0, 0.3, 1, 7, 12, 480, 1300, 5010, 0.0123, 99_000].map(niceMax)).toEqual([
      1, 0.3, 1, 8, 12, 500, 1500, 6000, 0.015, 100_000,
    ]);
  });

  it('a turn is drawn from the tokens that do not overlap; its context is the whole prompt', () => {
    const [p] = turnPoints(turns().slice(0, 1));
    expect(p).toMatchObject({ n: 1, read: 0, write: 1200, input: 100, output: 30, context: 1300, cost: 0.005 });
  });
});
