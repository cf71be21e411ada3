// --budget-hard (issue 44): a stream under way when its cap is reached ends
// with the protocol's own error event, naming the cap, as its service ends a
// failing stream: the SDKs surface it (Anthropic and chat throw; Responses
// yields `error`, then `response.failed`). Pure, no I/O.
import type { Protocol } from '../../core/routing-facts.js';
import { BUDGET_EXCEEDED } from '../../core/budget.js';
import { ERROR_EVENT } from '../protocols/index.js';
import { RESPONSES_EVENTS } from '../protocols/responses.js';

type StreamEnd = (message: string, seq: number, responseId: string) => string;

/** Each protocol's own way to end a failing stream. */
const STREAM_ENDS: Record<Protocol, StreamEnd> = {
  messages: (message) =>
    `event: ${ERROR_EVENT}\ndata: ${JSON.stringify({ type: ERROR_EVENT, error: { type: 'billing_error', message } })}\n\n`,
  chat: (message) =>
    `data: ${JSON.stringify({ error: { type: 'budget_exceeded', code: BUDGET_EXCEEDED, message, param: null } })}\n\n`,
  responses: (message, seq, responseId) => {
    const failed = {
      type: RESPONSES_EVENTS.failed,
      sequence_number: seq + 1,
      response: {
        id: responseId,
        object: 'response',
        status: 'failed',
        error: { code: BUDGET_EXCEEDED, message },
        output: [],
      },
    };
    return (
      `event: ${ERROR_EVENT}\ndata: ${JSON.stringify({ type: ERROR_EVENT, code: BUDGET_EXCEEDED, message, param: null, sequence_number: seq })}\n\n` +
      `event: ${RESPONSES_EVENTS.failed}\ndata: ${JSON.stringify(failed)}\n\n`
    );
  },
};

/** The SSE text that ends a stream at a cap. `seq`: Responses' next sequence number; `responseId`: its id. */
export function budgetStreamEnd(protocol: Protocol, message: string, seq: number, responseId: string): string {
  return STREAM_ENDS[protocol](message, seq, responseId);
}
