// What the proxy makes of real agents' sessions (sessions.live.test.ts runs the binaries, sessions.test.ts
// replays their recording), read back through the proxy's own API (local-api-client sessions() / session(id)) as
// the CLI and the editor read them: each session grouped by the id the client sends (docs/sessions.md), its
// token sums the sums of its requests' record.tokens, its cost estimated for a priced model and "no price" for an
// unpriced one.
import { expect } from 'vitest';
import type { SessionSummary } from '../../core/agent-session.js';
import type { TrafficRecord } from '../../core/record.js';
import { NO_TOKENS, type TokenCounts } from '../../core/token-counts.js';
import { localApi } from '../../client/local-api-client.js';
import { assertNoCanary } from '../log/canary.js';
import { untilAsync } from '../proxy/stack.js';
import type { ProxyName } from '../clients/harness.js';
import type { ProxySide } from './agent-suite.js';

type Stack = ProxySide<ProxyName>;

export const SUITE = 'sessions';
// Priced by @pydantic/genai-prices, and models it has no price for (the simulator serves both).
export const PRICED = { claude: 'claude-sonnet-4-6', openai: 'gpt-4.1' };
export const UNPRICED = { claude: 'claude-haiku-5-5', openai: 'gpt-6.2-sol' };

export const api = (stack: Stack, proxy: ProxyName) => localApi({ url: stack.proxies[proxy].url, token: stack.token });

/** The sessions of this case: those its requests on `proxy` were grouped in, once each holds all its requests. */
async function caseSessions(
  stack: Stack,
  proxy: ProxyName,
  before: number,
  min: number,
  pick: (s: SessionSummary) => boolean = () => true,
): Promise<Array<{ session: SessionSummary; records: TrafficRecord[] }>> {
  return untilAsync(
    async () => {
      const mine = stack.traffic.slice(before).filter((t) => t.proxy === proxy && t.record.session);
      const ids = new Set(mine.map((t) => t.record.session!.id));
      const sessions = (await api(stack, proxy).sessions()).sessions.filter((s) => ids.has(s.id) && pick(s));
      if (sessions.length < min) return undefined;
      const found = sessions.map((session) => ({
        session,
        records: stack.traffic
          .filter((t) => t.proxy === proxy && t.record.session?.id === session.id)
          .map((t) => t.record),
      }));
      return found.every((f) => f.records.length === f.session.requests) ? found : undefined;
    },
    // The session book is built off the request thread: at a load of 12 on 2 cores it took over 10 s.
    30_000,
    `${min} session(s) on ${proxy}`,
  );
}

function sumTokens(records: TrafficRecord[]): TokenCounts {
  const sum = { ...NO_TOKENS };
  for (const r of records) for (const k of Object.keys(sum) as (keyof TokenCounts)[]) sum[k] += r.tokens?.[k] ?? 0;
  return sum;
}

/** The session's token sums are its requests' record.tokens added up, and the requests did report usage. */
function expectTokenSums(session: SessionSummary, records: TrafficRecord[]): void {
  const sum = sumTokens(records);
  expect(records.filter((r) => r.status === 200).every((r) => r.tokens !== undefined)).toBe(true);
  expect(sum.input + sum.cacheRead + sum.cacheWrite5m + sum.cacheWrite1h).toBeGreaterThan(0);
  expect(sum.output).toBeGreaterThan(0);
  expect(session.tokens).toMatchObject({ ...sum, cacheWrite: sum.cacheWrite5m + sum.cacheWrite1h });
}

/** Every request priced: the session's estimate is theirs added up. */
function expectPriced(session: SessionSummary, records: TrafficRecord[]): void {
  let total = 0;
  for (const r of records) {
    if (!r.cost) continue;
    expect(r.cost, `${r.model}`).toMatchObject({ currency: 'USD', source: 'genai-prices' });
    if ('estimated' in r.cost) total += r.cost.estimated;
  }
  expect(total).toBeGreaterThan(0);
  expect(session.cost).toMatchObject({ currency: 'USD', unpriced: 0 });
  expect(session.cost!.estimated).toBeCloseTo(total, 10);
}

/** No request priced: no cost, and a note that says so and how to add a price (never $0.00). */
function expectUnpriced(session: SessionSummary, records: TrafficRecord[], model: string): void {
  const turns = records.filter((r) => r.tokens);
  expect(turns.length).toBeGreaterThan(0);
  for (const r of turns) expect(r.cost).toMatchObject({ noPrice: expect.stringContaining(model) });
  expect(session.cost).toBeNull();
  expect(session.costNote).toMatch(/price/i);
}

/**
 * Two sessions of one case, one on a priced model and one on an unpriced model: told apart by their models, each
 * with its own token sums, the first priced and the second "no price".
 */
function pricedBesideUnpriced(
  found: Array<{ session: SessionSummary; records: TrafficRecord[] }>,
  priced: string,
  unpriced: string,
) {
  const one = found.find((f) => f.session.models.includes(priced))!;
  const two = found.find((f) => f.session.models.includes(unpriced))!;
  expect(two.session.models).toEqual([unpriced]);
  expectTokenSums(one.session, one.records);
  expectTokenSums(two.session, two.records);
  expectPriced(one.session, one.records);
  expectUnpriced(two.session, two.records, unpriced);
  return { one, two };
}

export const CASES = {
  claudeSession: {
    title: 'Claude Code: a multi-turn session with a tool call (and a --resume) is one session',
    async facts(stack: Stack, before: number) {
      const [{ session, records }] = (await caseSessions(stack, 'claude', before, 1)) as [
        { session: SessionSummary; records: TrafficRecord[] },
      ];
      // The tool call and its result are two requests; the resumed turn a third, all in the session Claude Code named.
      expect(session.id).toMatch(/^claude-code:/);
      expect(session).toMatchObject({ source: 'header', client: 'claude-code', errors: 0, models: [PRICED.claude] });
      expect(session.requests).toBeGreaterThanOrEqual(3);
      expect(session.run?.tool).toBe('claude');
      expect(records.every((r) => r.session?.source === 'header')).toBe(true);
      const detail = await api(stack, 'claude').session(session.id);
      expect(detail.turns.map((t) => t.id)).toEqual(records.map((r) => r.id));
      expectTokenSums(session, records);
      expectPriced(session, records);
    },
  },
  claudeSideBySide: {
    title: 'Claude Code: two sessions side by side are grouped apart, never merged',
    async facts(stack: Stack, before: number) {
      const found = await caseSessions(stack, 'claude', before, 2);
      expect(found).toHaveLength(2);
      const { one, two } = pricedBesideUnpriced(found, PRICED.claude, UNPRICED.claude);
      expect(one.session.id).not.toBe(two.session.id);
      expect(one.session.models).toEqual([PRICED.claude]);
      const ids = new Set(one.records.map((r) => r.id));
      expect(two.records.some((r) => ids.has(r.id))).toBe(false);
    },
  },
  codexSession: {
    title: 'Codex: a tool round trip and `exec resume` on another model are one session, priced where a price exists',
    async facts(stack: Stack, before: number) {
      const [{ session, records }] = (await caseSessions(stack, 'default', before, 1, (s) =>
        s.models.includes(UNPRICED.openai),
      )) as [{ session: SessionSummary; records: TrafficRecord[] }];
      expect(session.id).toMatch(/^codex:/);
      expect(session).toMatchObject({ source: 'header', client: 'codex', errors: 0 });
      expect(new Set(session.models)).toEqual(new Set([PRICED.openai, UNPRICED.openai]));
      expect(session.requests).toBe(3);
      expectTokenSums(session, records);
      const priced = records.filter((r) => r.model === PRICED.openai);
      const unpriced = records.filter((r) => r.model === UNPRICED.openai);
      const estimated = priced.reduce((n, r) => n + (r.cost && 'estimated' in r.cost ? r.cost.estimated : 0), 0);
      expect(estimated).toBeGreaterThan(0);
      expect(session.cost).toMatchObject({ currency: 'USD', unpriced: unpriced.length });
      expect(session.cost!.estimated).toBeCloseTo(estimated, 10);
      expect(unpriced.every((r) => r.cost && 'noPrice' in r.cost)).toBe(true);
      expect(session.costNote).toMatch(new RegExp(`${unpriced.length} request\\(s\\) not priced`));
    },
  },
  opencodeSessions: {
    title: 'opencode: its title request and a tool round trip are one session; an unpriced run is another, "no price"',
    async facts(stack: Stack, before: number) {
      const found = await caseSessions(stack, 'default', before, 2, (s) => s.client === 'opencode');
      const { one } = pricedBesideUnpriced(found, PRICED.openai, UNPRICED.openai);
      // Title, tool call, tool result: three requests under the one x-session-id opencode sent.
      // (The title request is agent `title` only when its body is read: the SessionBook stops at the header's session.)
      expect(one.session).toMatchObject({ source: 'header', models: [PRICED.openai], errors: 0 });
      expect(one.session.requests).toBe(3);
    },
  },
  piRun: {
    title: 'pi, which names no session and sends the SDKs headers: named by its body, grouped by its loopgate run',
    async facts(stack: Stack, before: number) {
      const [{ session, records }] = (await caseSessions(
        stack,
        'default',
        before,
        1,
        (s) => s.source === 'run' && s.run?.tool === 'pi',
      )) as [{ session: SessionSummary; records: TrafficRecord[] }];
      expect(session).toMatchObject({ client: 'pi', requests: 2, models: [PRICED.openai] });
      expect(records.every((r) => r.session?.client === 'pi')).toBe(true);
      expectTokenSums(session, records);
      expectPriced(session, records);
    },
  },
};

/** No key or token in any session answer. */
export async function expectCleanSessionAnswers(stack: Stack): Promise<void> {
  const secrets = [...Object.values(stack.keys), stack.token];
  for (const proxy of ['claude', 'default'] as const) {
    const list = await api(stack, proxy).sessions();
    const details = await Promise.all(list.sessions.map((s) => api(stack, proxy).session(s.id)));
    assertNoCanary(JSON.stringify([list, details]), secrets);
  }
}
