// The service's three protocols and how GET /v1/models names them in
// `supported_endpoint_types` (the new-api convention). One table for the
// simulator, the bridge, doctor, `loopgate models` and the Model Explorer.

export type Protocol = 'chat' | 'responses' | 'messages';

export const ENDPOINT_TYPE: Readonly<Record<Protocol, string>> = {
  chat: 'openai',
  responses: 'openai-response',
  messages: 'anthropic',
};

const BY_TYPE = new Map(Object.entries(ENDPOINT_TYPE).map(([p, t]) => [t, p as Protocol]));

export function protocolOfEndpointType(type: unknown): Protocol | undefined {
  return typeof type === 'string' ? BY_TYPE.get(type) : undefined;
}
