// The session panel names the price each model was estimated with where it is not its own, and a floor, as
// `loopgate sessions` does (issue 42 item 8): the HTML the webview gets, built from a session summary as the
// proxy's local API sends it. Outside values (model names from the upstream) are escaped.
import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../core/agent-session.js';
import { sessionHtml } from '../../extension/sessions/session-html.js';
import { bareSession } from '../kit/sessions.js';

const evil = `<img src=x onerror="alert(1)">`;
const opts = { nonce: 'N0NCE', cspSource: 'vscode-resource:', scriptUri: 'vscode-resource:/ext/dist/session-page.js' };

function summary(over: Partial<SessionSummary>): SessionSummary {
  return bareSession({
    id: 'claude-code:d4d4d4d4',
    models: ['claude-sonnet-4-20250514'],
    tokens: {
      input: 3,
      output: 19,
      cacheRead: 0,
      cacheWrite5m: 60_000,
      cacheWrite1h: 150_000,
      reasoning: 0,
      cacheWrite: 210_000,
    },
    cost: { estimated: 1.13, currency: 'USD', unpriced: 0 },
    ...over,
  });
}

const page = (over: Partial<SessionSummary>) =>
  sessionHtml({ session: summary(over), seqs: [], turns: [] }, opts, new Date('2026-11-28T03:00:00.000Z'));

describe('the session panel names the price used', () => {
  it('says which model each was priced as, and how, and that an estimate is a floor', () => {
    const html = page({
      pricedAs: [
        { model: 'claude-sonnet-4-20250514', pricedAs: 'claude-sonnet-4-0', match: 'dated' },
        { model: 'gpt-6.1-sol', pricedAs: 'gpt-5.1', match: 'mapped' },
      ],
      floors: { requests: 1, note: 'a floor: the vendor bills claude-sonnet-4-0 at a long-context price' },
    });
    expect(html).toContain(
      '<div class="priced-as dim">claude-sonnet-4-20250514 priced as claude-sonnet-4-0 (its date suffix dropped)</div>',
    );
    expect(html).toContain(
      '<div class="priced-as dim">gpt-6.1-sol priced as gpt-5.1 (mapped in the prices setting)</div>',
    );
    expect(html).toContain('1 request(s): a floor: the vendor bills claude-sonnet-4-0 at a long-context price');
  });

  it('says nothing of it when every model had its own price, and escapes a model name', () => {
    expect(page({})).not.toContain('priced-as');
    const hostile = page({ pricedAs: [{ model: evil, pricedAs: 'gpt-5.1', match: 'mapped' }] });
    expect(hostile).not.toContain('<img');
    expect(hostile).toContain('&#60;img');
  });
});
