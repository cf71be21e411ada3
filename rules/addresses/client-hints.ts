// What to tell the user when the proxy had to rewrite a tool's request path.
// Pure: the advice depends on the path the client sent and, where it can be
// told, on which client sent it, because the conventions differ:
//   - the Anthropic SDK and Claude Code take the prefix WITHOUT /v1 ({site_url})
//     and append /v1/messages themselves;
//   - @ai-sdk/anthropic (Vercel AI SDK) takes a baseURL WITH /v1 and appends /messages;
//   - OpenAI-style clients (OpenAI SDK, Codex, @ai-sdk/openai) take {base_url},
//     ending in /v1 once, and append the endpoint.
import type { Rewrite } from './paths.js';
import { looksLikeMessagesTarget } from '../protocols/anthropic-messages.js';

export type ClientId = 'claude-code' | 'anthropic-sdk' | 'ai-sdk-anthropic' | 'codex' | 'openai-sdk' | 'ai-sdk-openai';

type Headers = Record<string, string | string[] | undefined>;

function header(h: Headers, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The client that sent a request, from its User-Agent (and the Stainless SDKs'
 * x-stainless-lang header), or undefined when it cannot be told.
 */
export function identifyClient(headers: Headers): ClientId | undefined {
  const ua = (header(headers, 'user-agent') ?? '').toLowerCase();
  // Vercel AI SDK providers add `ai-sdk/<provider>/<version>` to the User-Agent.
  if (ua.includes('ai-sdk/anthropic')) return 'ai-sdk-anthropic';
  if (ua.includes('ai-sdk/openai')) return 'ai-sdk-openai';
  // Claude Code: `claude-cli/<version> (external, cli)` (it also sends the Stainless headers).
  if (ua.startsWith('claude-cli/') || ua.includes('claude-code')) return 'claude-code';
  // Codex: `codex_cli_rs/<version> …`, plus an `originator: codex_cli_rs` header.
  if (ua.startsWith('codex') || (header(headers, 'originator') ?? '').toLowerCase().startsWith('codex')) return 'codex';
  // The official SDKs: `Anthropic/JS 0.x`, `Anthropic/Python …`, `OpenAI/JS 6.x`.
  if (ua.startsWith('anthropic/')) return 'anthropic-sdk';
  if (ua.startsWith('openai/')) return 'openai-sdk';
  if (header(headers, 'x-stainless-lang') !== undefined) {
    return header(headers, 'anthropic-version') !== undefined ? 'anthropic-sdk' : 'openai-sdk';
  }
  return undefined;
}

const NAME: Record<ClientId, string> = {
  'claude-code': 'Claude Code',
  'anthropic-sdk': 'The Anthropic SDK',
  'ai-sdk-anthropic': '@ai-sdk/anthropic',
  codex: 'Codex',
  'openai-sdk': 'The OpenAI SDK',
  'ai-sdk-openai': '@ai-sdk/openai',
};

/** Both Anthropic conventions, for when the client cannot be told. */
function anthropicBoth(origin: string): string {
  return `For the Anthropic SDK and Claude Code set ANTHROPIC_BASE_URL to ${origin} (no /v1); for @ai-sdk/anthropic, baseURL is ${origin}/v1.`;
}

const AI_SDK_DIFFERS = (origin: string) => `(@ai-sdk/anthropic differs: its baseURL is ${origin}/v1.)`;

/** What to set, for an Anthropic-Messages client. */
function anthropicBase(origin: string, client: ClientId | undefined): string {
  switch (client) {
    case 'claude-code':
      return `Set ANTHROPIC_BASE_URL to ${origin} (no /v1: Claude Code appends /v1/messages itself). ${AI_SDK_DIFFERS(origin)}`;
    case 'anthropic-sdk':
      return `Set the Anthropic SDK's baseURL (or ANTHROPIC_BASE_URL) to ${origin} (no /v1: the SDK appends /v1/messages itself). ${AI_SDK_DIFFERS(origin)}`;
    case 'ai-sdk-anthropic':
      return `Set @ai-sdk/anthropic's baseURL to ${origin}/v1 (it appends /messages itself; unlike the Anthropic SDK and Claude Code, its baseURL includes /v1).`;
    default:
      return anthropicBoth(origin);
  }
}

/** What to set (no full stop), for an OpenAI-style client: every known one takes {base_url}, ending in /v1 once. */
function openaiBase(origin: string, client: ClientId | undefined): string {
  switch (client) {
    case 'codex':
      return `Set Codex's base_url (config.toml) or OPENAI_BASE_URL to ${origin}/v1`;
    case 'openai-sdk':
      return `Set the OpenAI SDK's baseURL (or OPENAI_BASE_URL) to ${origin}/v1`;
    case 'ai-sdk-openai':
      return `Set @ai-sdk/openai's baseURL to ${origin}/v1`;
    default:
      return `Set the base URL to ${origin}/v1`;
  }
}

/** The Anthropic client families by what they append: the full path, or /messages onto a base with /v1. */
function appendsFullPath(client: ClientId | undefined): boolean | undefined {
  if (client === 'claude-code' || client === 'anthropic-sdk') return true;
  if (client === 'ai-sdk-anthropic') return false;
  return undefined;
}

/**
 * One hint for one rewrite: what the client did and what to set so the proxy
 * no longer has to rewrite. `origin` is the proxy's, e.g. http://127.0.0.1:8787.
 */
export function rewriteHint(rewrite: Rewrite, origin: string, client?: ClientId): string | undefined {
  const anthropic = looksLikeMessagesTarget(rewrite.to);
  const who = client ? `${NAME[client]} sent ${rewrite.from}` : `A tool sent ${rewrite.from}`;
  if (anthropic) {
    const full = appendsFullPath(client);
    switch (rewrite.reason) {
      case 'duplicate-v1':
        if (full === true)
          return `${who}: it appends /v1/messages to a base URL that already ends in /v1. ${anthropicBase(origin, client)}`;
        if (full === false)
          return `${who}: it appends /messages to its baseURL, which has /v1 twice. ${anthropicBase(origin, client)}`;
        return `${who}: this client appended /v1/messages to a base URL that already ends in /v1. ${anthropicBoth(origin)}`;
      case 'missing-v1':
        // Only a client that appends /messages alone (the AI SDK's convention) sends this.
        return full === false
          ? `${who}: it appends /messages to its baseURL, which lacks /v1. ${anthropicBase(origin, client)}`
          : `${who} without /v1: this client appended /messages to a base URL without /v1. ${anthropicBase(origin, client)}`;
      case 'duplicate-endpoint':
        return `${who}: an endpoint path was pasted into its base URL. ${anthropicBase(origin, client)}`;
      case 'collapsed-slashes':
        return `${who} with a doubled slash: remove the trailing slash from its base URL. ${anthropicBase(origin, client)}`;
      default:
        return undefined;
    }
  }
  switch (rewrite.reason) {
    case 'duplicate-v1':
      return `${who}: its base URL ends in /v1 and /v1 was added again. ${openaiBase(origin, client)}, with /v1 exactly once.`;
    case 'duplicate-endpoint':
      return `${who}: an endpoint path was pasted into its base URL. ${openaiBase(origin, client)}, the base only.`;
    case 'missing-v1':
      return `${who} without /v1: an OpenAI-compatible base URL ends in /v1. ${openaiBase(origin, client)}.`;
    case 'collapsed-slashes':
      return `${who} with a doubled slash: remove the trailing slash from its base URL. ${openaiBase(origin, client)}.`;
    default:
      return undefined;
  }
}
