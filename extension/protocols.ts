// The three protocols a model can be reached with, and minimal requests for
// each (seed-spec §1.6: minimal request, stream false). No vscode here.

import { protocolOfEndpointType, type Protocol } from '../proxy/rules/protocols.js';

export type { Protocol };

/** Try order: Responses when supported, Chat Completions as the fallback (spec §1.5), Messages last. */
export const PROTOCOL_ORDER: readonly Protocol[] = ['responses', 'chat', 'messages'];

export const PROTOCOL_INFO: Record<Protocol, { label: string; short: string; path: string; codicon: string }> = {
  responses: { label: 'Responses', short: 'responses', path: '/v1/responses', codicon: 'sparkle' },
  chat: { label: 'Chat Completions', short: 'chat', path: '/v1/chat/completions', codicon: 'comment-discussion' },
  messages: { label: 'Anthropic Messages', short: 'messages', path: '/v1/messages', codicon: 'mail' },
};

/** `supported_endpoint_types` (new-api) → our protocols; undefined when the relay did not say. */
export function protocolsFromEndpointTypes(types: unknown): Protocol[] | undefined {
  if (!Array.isArray(types)) return undefined;
  const out = new Set<Protocol | undefined>(types.map(protocolOfEndpointType));
  return PROTOCOL_ORDER.filter((p) => out.has(p));
}

export interface TryResult {
  protocol: Protocol;
  status: number;
  latencyMs: number;
  /** The reply text on success. */
  text?: string;
  /** The upstream error envelope's message and Loopgate's diagnosis header, on failure. */
  error?: string;
  diagnosis?: string;
}

const PROMPT = 'Reply with one short sentence.';

function requestFor(protocol: Protocol, model: string): object {
  if (protocol === 'responses') return { model, input: PROMPT, stream: false };
  if (protocol === 'chat') return { model, messages: [{ role: 'user', content: PROMPT }], stream: false };
  return { model, max_tokens: 64, messages: [{ role: 'user', content: PROMPT }], stream: false };
}

function replyText(protocol: Protocol, body: any): string {
  if (protocol === 'chat') return String(body?.choices?.[0]?.message?.content ?? '');
  if (protocol === 'messages') {
    return Array.isArray(body?.content) ? body.content.filter((c: any) => c?.type === 'text').map((c: any) => c.text).join('') : '';
  }
  if (typeof body?.output_text === 'string') return body.output_text;
  const parts: string[] = [];
  for (const item of Array.isArray(body?.output) ? body.output : []) {
    for (const c of Array.isArray(item?.content) ? item.content : []) if (c?.type === 'output_text') parts.push(String(c.text ?? ''));
  }
  return parts.join('');
}

/** One minimal, non-streaming request through the proxy. Never throws for HTTP errors. */
export async function minimalRequest(proxyUrl: string, token: string, model: string, protocol: Protocol, timeoutMs = 60_000): Promise<TryResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  if (protocol === 'messages') headers['anthropic-version'] = '2023-06-01';
  const started = performance.now();
  const res = await fetch(proxyUrl + PROTOCOL_INFO[protocol].path, {
    method: 'POST',
    headers,
    body: JSON.stringify(requestFor(protocol, model)),
    signal: AbortSignal.timeout(timeoutMs),
    redirect: 'manual',
  });
  const text = await res.text();
  const latencyMs = Math.round(performance.now() - started);
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (res.ok) return { protocol, status: res.status, latencyMs, text: replyText(protocol, body) };
  return {
    protocol,
    status: res.status,
    latencyMs,
    error: typeof body?.error?.message === 'string' ? body.error.message : `HTTP ${res.status}`,
    diagnosis: res.headers.get('x-loopgate-diagnosis') ?? undefined,
  };
}

/** A protocol is unsupported on the route when the minimal request gets 404 (spec §7). */
export function isUnsupported(r: TryResult): boolean {
  return r.status === 404 || r.diagnosis === 'protocol-unsupported';
}
