// What the proxy shows of Claude Code's and Codex's requests (agents.live.test.ts runs the real binaries,
// agents.test.ts replays their recording): one entry per case, named as the tape names it. Each reads the
// records, hints and logs of the stack after `before`, the same on either.
import { expect } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import type { ProxyName } from '../clients/harness.js';
import { MESSAGES, MESSAGES_ANY, recordsAfter, type ProxySide } from './agent-suite.js';

const RESPONSES = /^\/v1\/responses/;
const RESPONSES_ANY = /\/responses/;

type Stack = ProxySide<ProxyName>;

export interface ProxyFacts {
  title: string;
  facts(stack: Stack, before: number): Promise<void>;
}

/** The agent's default turn: its default model, natively (no bridge), streamed and answered, with its current parameters. */
function expectNativeDefault(recs: TrafficRecord[], model: string, params: string[]): void {
  expect(recs.map((r) => [r.model, r.status, r.stream, r.bridge])).toContainEqual([model, 200, true, undefined]);
  expect(recs[0]!.params).toEqual(expect.arrayContaining(params));
}

export const SUITE = 'agents';

export const CASES = {
  claudeDefault: {
    title: 'Claude Code, default model, natively on a Claude group: streams an answer',
    async facts(stack, before) {
      const recs = await recordsAfter(stack, 'claude', before, MESSAGES);
      // Its own default: the 5-5 Opus, with the current betas (system turns, output_config, context_management, adaptive thinking).
      expectNativeDefault(recs, 'claude-opus-5-5', ['output_config', 'context_management', 'thinking']);
      expect(recs.every((r) => r.status === 200)).toBe(true);
    },
  },
  claudeModels: {
    title: 'Claude Code, --model claude-sonnet-4-6 natively, and the sonnet alias',
    async facts(stack, before) {
      const models = (await recordsAfter(stack, 'claude', before, MESSAGES, 2)).map((r) => r.model);
      expect(models).toContain('claude-sonnet-4-6');
      expect(models).toContain('claude-sonnet-5-5');
    },
  },
  claudeTool: {
    title: 'Claude Code, a tool round trip: the call, then its result in the next request',
    async facts(stack, before) {
      const recs = await recordsAfter(stack, 'claude', before, MESSAGES, 2);
      expect(recs.every((r) => r.status === 200)).toBe(true);
    },
  },
  claudePlain: {
    title: 'Claude Code, a plain prompt: one request, no tool call',
    async facts(stack, before) {
      await recordsAfter(stack, 'claude', before, MESSAGES);
      // One request: a tool call would have brought a second one (the tool result).
      expect(
        stack.traffic.slice(before).filter((t) => t.proxy === 'claude' && MESSAGES.test(t.record.path)),
      ).toHaveLength(1);
    },
  },
  claudeRescue: {
    title: 'Claude Code, an Anthropic base URL ending in /v1 is rescued, and the rewrite is reported',
    async facts(stack, before) {
      const recs = await recordsAfter(stack, 'claude', before, MESSAGES_ANY);
      expect(recs[0]!.path).toMatch(/^\/v1\/v1\/messages/);
      expect(recs[0]!.rewrites?.[0]).toMatch(/duplicate-v1/);
      expect(recs[0]!.status).toBe(200);
    },
  },
  claudeBridged: {
    title: 'Claude Code, bridged over a chat-only group: default model, another model and a tool round trip',
    async facts(stack, before) {
      const recs = await recordsAfter(stack, 'chatOnly', before, MESSAGES, 4);
      expect(recs.every((r) => r.status === 200 && r.bridge === 'messages->chat' && r.stream === true)).toBe(true);
      expect(new Set(recs.map((r) => r.model))).toEqual(new Set(['claude-opus-5-5', 'claude-sonnet-4-6']));
      // What the chat route cannot use is left out and said so, never refused.
      expect(recs.flatMap((r) => r.bridgeDropped ?? [])).toEqual(expect.arrayContaining(['context_management']));
      expect(stack.hints.some((h) => /Bridged messages->chat .* left out .*context_management/.test(h))).toBe(true);
    },
  },
  codexDefault: {
    title: 'Codex, default model, natively on a Responses group: streams an answer',
    async facts(stack, before) {
      const recs = await recordsAfter(stack, 'default', before, RESPONSES);
      expectNativeDefault(recs, 'gpt-6.2-sol', ['client_metadata', 'prompt_cache_key', 'reasoning']);
    },
  },
  codexTool: {
    title: 'Codex, -m gpt-4.1 with a tool round trip: the exec_command call, then its output',
    async facts(stack, before) {
      const recs = await recordsAfter(stack, 'default', before, RESPONSES, 2);
      expect(recs.every((r) => r.status === 200 && r.model === 'gpt-4.1')).toBe(true);
    },
  },
  codexRescue: {
    title: 'Codex, a base URL with /v1/v1, and one with the endpoint pasted in, are rescued',
    async facts(stack, before) {
      const recs = await recordsAfter(stack, 'default', before, RESPONSES_ANY, 2);
      expect(recs.map((r) => r.path)).toEqual(expect.arrayContaining(['/v1/v1/responses', '/v1/responses/responses']));
      expect(recs.every((r) => r.status === 200 && (r.rewrites?.length ?? 0) > 0)).toBe(true);
    },
  },
  codexBridged: {
    title:
      'Codex, bridged over a chat-only group: default model (tools in additional_tools namespaces) and a tool round trip',
    async facts(stack, before) {
      const recs = await recordsAfter(stack, 'chatOnly', before, RESPONSES, 3);
      expect(recs.every((r) => r.status === 200 && r.bridge === 'responses->chat' && r.stream === true)).toBe(true);
      expect(new Set(recs.map((r) => r.model))).toEqual(new Set(['gpt-6.2-sol', 'gpt-4o-mini']));
      const dropped = recs.flatMap((r) => r.bridgeDropped ?? []);
      expect(dropped).toEqual(expect.arrayContaining(['client_metadata', 'tools[web_search]']));
    },
  },
} satisfies Record<string, ProxyFacts>;

export type CaseName = keyof typeof CASES;
