// A fake credential the Node side puts in its own environment; it must not
// reach code-server, the extension host, or any log file.
export const CANARY_PREFIX = 'sk-e2ecanary';
export const CANARY_ENV = 'LOOPGATE_E2E_CANARY_API_KEY';
export const CANARY_VALUE = `${CANARY_PREFIX}-0123456789abcdef`;
