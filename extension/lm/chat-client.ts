// One chat request through the local proxy (so the traffic log, redaction and
// diagnosis apply), streamed: events are handed over as the bytes arrive, and
// aborting the signal closes the connection, which the proxy passes upstream.
import type { ChatEvent, ChatRequest } from './chat-types.js';
import { describeFailure, type ChatFailure } from './chat-errors.js';
import { ChatStream, ChatStreamError } from './chat-stream.js';
import { wireRequest } from './request-body.js';

export class ChatRequestFailed extends Error {
  constructor(readonly failure: ChatFailure) {
    super(failure.message);
  }
}

export interface SendChatOptions {
  proxyUrl: string;
  token: string;
  request: ChatRequest;
  signal: AbortSignal;
  onEvent: (event: ChatEvent) => void;
  /** For a model-not-found answer: the IDs to suggest from. */
  knownModels?: readonly string[];
}

/** Resolves when the answer is complete; rejects with ChatRequestFailed, ChatStreamError or the abort. */
export async function sendChat(opts: SendChatOptions): Promise<void> {
  const wire = wireRequest(opts.request);
  const res = await fetch(new URL(wire.path, opts.proxyUrl), {
    method: 'POST',
    headers: { ...wire.headers, authorization: `Bearer ${opts.token}`, 'user-agent': 'loopgate-vscode-chat' },
    body: JSON.stringify(wire.body),
    signal: opts.signal,
    redirect: 'manual',
  });
  if (!res.ok) {
    const body = await res.text();
    throw new ChatRequestFailed(
      describeFailure(res.status, body, {
        path: wire.path,
        model: opts.request.model,
        knownModels: opts.knownModels,
        diagnosisHeader: res.headers.get('x-loopgate-diagnosis') ?? undefined,
        retryAfter: res.headers.get('retry-after') ?? undefined,
      }),
    );
  }
  const stream = new ChatStream(opts.request.protocol);
  const reader = res.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const e of stream.push(value)) opts.onEvent(e);
    }
    for (const e of stream.end()) opts.onEvent(e);
  } catch (err) {
    // An error event or a failing consumer: close the connection, so the upstream stops generating (and billing).
    await reader.cancel().catch(() => undefined);
    throw err;
  }
  if (!stream.finished)
    throw new ChatStreamError(
      'the answer stopped before it was complete (the connection to the service closed); try again',
    );
}
