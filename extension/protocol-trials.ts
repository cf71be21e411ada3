// The three protocols as the extension shows and tries them: the table in
// rules/protocols/ (titles, paths, minimal requests, reading the reply)
// plus what only the extension needs (codicons, trying a model). No vscode here.

import { PROTOCOL_TABLE, minimalRequest, outputText, type Protocol } from '../rules/protocols/index.js';

/** Try order: Responses when the model lists it, Chat Completions as the fallback, Messages last. */

const CODICONS: Record<Protocol, string> = { responses: 'sparkle', chat: 'comment-discussion', messages: 'mail' };

export const PROTOCOL_INFO: Record<Protocol, { label: string; short: string; path: string; codicon: string }> = {
  responses: info('responses'),
  chat: info('chat'),
  messages: info('messages'),
};

function info(p: Protocol): { label: string; short: string; path: string; codicon: string } {
  return { label: PROTOCOL_TABLE[p].title, short: p, path: PROTOCOL_TABLE[p].path, codicon: CODICONS[p] };
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
  /** x-loopgate-route: the key the proxy used, and native or bridged (`claude native`). */
  route?: string;
}

const PROMPT = 'Reply with one short sentence.';

/**
 * Tries a model on one protocol: the protocol's minimal, non-streaming request
 * sent through the proxy, timed. Never throws for HTTP errors.
 */
export async function tryProtocol(
  proxyUrl: string,
  token: string,
  model: string,
  protocol: Protocol,
  timeoutMs = 60_000,
): Promise<TryResult> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: `Bearer ${token}`,
    ...PROTOCOL_TABLE[protocol].clientHeaders,
  };
  const started = performance.now();
  const res = await fetch(proxyUrl + PROTOCOL_INFO[protocol].path, {
    method: 'POST',
    headers,
    body: JSON.stringify(minimalRequest(protocol, model, { stream: false, prompt: PROMPT })),
    signal: AbortSignal.timeout(timeoutMs),
    redirect: 'manual',
  });
  const text = await res.text();
  const latencyMs = Math.round(performance.now() - started);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const route = res.headers.get('x-loopgate-route') ?? undefined;
  if (res.ok) return { protocol, status: res.status, latencyMs, text: outputText(protocol, body), route };
  return {
    route,
    protocol,
    status: res.status,
    latencyMs,
    error: errorMessage(body) ?? `HTTP ${res.status}`,
    diagnosis: res.headers.get('x-loopgate-diagnosis') ?? undefined,
  };
}

/**
 * A protocol is unsupported on the route when the minimal request gets 404:
 * in the relay's error table, 404 on a protocol's route means the key group's
 * channels lack that protocol (the proxy says so in x-loopgate-diagnosis).
 */
export function isUnsupported(r: TryResult): boolean {
  return r.status === 404 || r.diagnosis === 'protocol-unsupported';
}

/** The message of an `{error: {message}}` envelope (OpenAI's and, nested the same way, Anthropic's). */
function errorMessage(body: unknown): string | undefined {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : undefined;
}
