// What the fault report says of the same injected fault wherever it is read (the proxy's API, `loopgate faults --json`).

/**
 * An openai chat request for gpt-4.1 given one 429 with retry-after 1 s: the client retried once, honoured the wait,
 * and the retry succeeded.
 */
export const CHAT_429_RETRIED_ONCE_HONOURED = {
  fault: { kind: '429', retryAfterS: 1 },
  path: '/v1/chat/completions',
  model: 'gpt-4.1',
  retried: true,
  retries: 1,
  honouredRetryAfter: true,
  succeeded: true,
  settled: true,
};
