// One-time console hints: what the user should fix in their tool so the proxy
// no longer has to rewrite its requests.
import type { Rewrite } from '../rules/paths.js';
import type { GuardConfig } from './guard.js';

export function rewriteHint(rewrite: Rewrite, guard: GuardConfig): string | undefined {
  const origin = [...guard.allowedOrigins][0] ?? 'http://127.0.0.1:8787';
  const bases = `OpenAI-style clients: ${origin}/v1; Anthropic clients: ${origin}`;
  const anthropic = /\/messages(\/|$)/.test(rewrite.to);
  switch (rewrite.reason) {
    case 'duplicate-v1':
      return anthropic
        ? `A tool sent ${rewrite.from}: its Anthropic base URL ends in /v1, and the client adds /v1/messages itself. Set it to ${origin} (no /v1).`
        : `A tool sent ${rewrite.from}: its base URL ends in /v1 and /v1 was added again. Set the base URL to ${origin}/v1 exactly once.`;
    case 'duplicate-endpoint':
      return `A tool sent ${rewrite.from}: an endpoint path was pasted into its base URL. Set only the base (${bases}).`;
    case 'missing-v1':
      return anthropic
        ? undefined
        : `A tool sent ${rewrite.from} without /v1: an OpenAI-compatible base URL ends in /v1. Set it to ${origin}/v1.`;
    case 'collapsed-slashes':
      return `A tool sent ${rewrite.from} with a doubled slash: remove the trailing slash from its base URL (${bases}).`;
    default:
      return undefined;
  }
}
