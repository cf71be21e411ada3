// OpenAI Responses (POST /v1/responses; also GET /v1/responses/{id} and the
// WebSocket transport on the same path).
import { isObject, type MinimalRequestOptions, type ProtocolSpec, type ReadUsage } from './spec.js';

export const responses = {
  protocol: 'responses',
  title: 'Responses',
  path: '/v1/responses',
  endpoint: '/responses',
  endpointType: 'openai-response',
  envelope: 'openai',
  request: { model: 'model', stream: 'stream', maxTokens: ['max_output_tokens'] },
  usage: {
    input: 'input_tokens',
    output: 'output_tokens',
    total: 'total_tokens',
    cacheRead: 'cached_tokens',
    reasoning: 'reasoning_tokens',
    inputDetails: 'input_tokens_details',
    outputDetails: 'output_tokens_details',
  },
  // Each terminal event carries the whole response object.
  stream: { terminal: ['response.completed', 'response.incomplete', 'response.failed'], completed: 'response.completed' },
} as const satisfies ProtocolSpec;

/** The content part type of the model's text (in `output[].content[]`, and in assistant turns sent back as input). */
export const OUTPUT_TEXT = 'output_text';

/** The stream events the proxy, the bridge and the extension read or write by name. */
export const RESPONSES_EVENTS = {
  created: 'response.created',
  inProgress: 'response.in_progress',
  itemDone: 'response.output_item.done',
  textDelta: 'response.output_text.delta',
  textDone: 'response.output_text.done',
  completed: 'response.completed',
  incomplete: 'response.incomplete',
  failed: 'response.failed',
} as const;

/** Content part types that carry plain text: the API's input_text/output_text, and `text` that lenient clients send. */
export function isResponsesTextPart(type: unknown): boolean {
  return type === 'input_text' || type === OUTPUT_TEXT || type === 'text';
}

/** A model text part as the API writes it in `output[].content[]`. */
export function outputTextPart(text: string): Record<string, unknown> {
  return { type: OUTPUT_TEXT, text, annotations: [], logprobs: [] };
}

export function responsesMinimalRequest(model: string, opts: MinimalRequestOptions): Record<string, unknown> {
  return { model, input: opts.prompt, stream: opts.stream };
}

/** A Response's text: the SDK's `output_text` convenience field when present, else its output text parts joined. */
export function responsesOutputText(body: unknown): string {
  if (!isObject(body)) return '';
  if (typeof body[OUTPUT_TEXT] === 'string') return body[OUTPUT_TEXT];
  const parts: string[] = [];
  for (const item of Array.isArray(body.output) ? body.output : []) {
    for (const c of isObject(item) && Array.isArray(item.content) ? item.content : []) if (isObject(c) && c.type === OUTPUT_TEXT) parts.push(String(c.text ?? ''));
  }
  return parts.join('');
}

export function isResponsesTerminal(type: unknown): boolean {
  return (responses.stream.terminal as readonly unknown[]).includes(type);
}

/** A stream that contains its completion event (a probe's check, not a parser). */
export function responsesStreamCompleted(sse: string): boolean {
  return sse.includes(responses.stream.completed);
}

/** A Response's `usage` object (missing counts are 0; the total is input + output). */
export function responsesUsage(u: ReadUsage): Record<string, unknown> {
  const f = responses.usage;
  const input = u.input ?? 0;
  const output = u.output ?? 0;
  return {
    [f.input]: input,
    [f.inputDetails]: { [f.cacheRead]: u.cached ?? 0 },
    [f.output]: output,
    [f.outputDetails]: { [f.reasoning]: u.reasoning ?? 0 },
    [f.total]: input + output,
  };
}
