// The library-client conformance matrix: which client runs which case, where.
import type { ProxyName, Runtime } from './harness.js';

/**
 * text / stream: plain generation, non-stream and stream (native route).
 * tool / toolStream: a function-tool round trip (call, local result, final text).
 * brokenBase: a base URL with a classic mistake that the proxy rewrites.
 * bridged / bridgedStream / bridgedTool: the same over the chat-only key, where the
 * proxy serves Responses or Messages through Chat Completions.
 * messages: curl's Anthropic-Messages request.
 */
export type CaseName =
  'text' | 'stream' | 'tool' | 'toolStream' | 'brokenBase' | 'bridged' | 'bridgedStream' | 'bridgedTool' | 'messages';

export type Endpoint = '/v1/chat/completions' | '/v1/responses' | '/v1/messages';

export interface ClientSpec {
  /** The runner's client id (see runner.mjs CLIENTS). */
  client: string;
  /** Human label, e.g. "@ai-sdk/openai .responses()". */
  label: string;
  runtime: Runtime['name'];
  /** Packages whose installed versions name the row (first one = the headline). */
  packages: string[];
  /** The protocol the client speaks natively. */
  endpoint: Endpoint;
  model: string;
  cases: CaseName[];
}

const OPENAI_MODEL = 'gpt-4o-mini';
const CLAUDE_MODEL = 'claude-sonnet-4-6';

const CHAT: CaseName[] = ['text', 'stream', 'tool', 'brokenBase'];
const BRIDGEABLE: CaseName[] = ['text', 'stream', 'tool', 'brokenBase', 'bridged', 'bridgedStream'];

function aiSdk(runtime: Runtime['name']): ClientSpec[] {
  return [
    {
      client: 'ai-responses',
      label: '@ai-sdk/openai .responses()',
      runtime,
      packages: ['ai', '@ai-sdk/openai'],
      endpoint: '/v1/responses',
      model: OPENAI_MODEL,
      cases: [...BRIDGEABLE, 'toolStream'],
    },
    {
      client: 'ai-chat',
      label: '@ai-sdk/openai .chat()',
      runtime,
      packages: ['ai', '@ai-sdk/openai'],
      endpoint: '/v1/chat/completions',
      model: OPENAI_MODEL,
      cases: [...CHAT, 'toolStream'],
    },
    {
      client: 'ai-compatible',
      label: '@ai-sdk/openai-compatible',
      runtime,
      packages: ['ai', '@ai-sdk/openai-compatible'],
      endpoint: '/v1/chat/completions',
      model: OPENAI_MODEL,
      cases: CHAT,
    },
    {
      client: 'ai-anthropic',
      label: '@ai-sdk/anthropic',
      runtime,
      packages: ['ai', '@ai-sdk/anthropic'],
      endpoint: '/v1/messages',
      model: CLAUDE_MODEL,
      cases: BRIDGEABLE,
    },
  ];
}

function official(runtime: Runtime['name']): ClientSpec[] {
  return [
    {
      client: 'openai-chat',
      label: 'openai chat.completions',
      runtime,
      packages: ['openai'],
      endpoint: '/v1/chat/completions',
      model: OPENAI_MODEL,
      cases: CHAT,
    },
    {
      client: 'openai-responses',
      label: 'openai responses',
      runtime,
      packages: ['openai'],
      endpoint: '/v1/responses',
      model: OPENAI_MODEL,
      cases: BRIDGEABLE,
    },
    {
      client: 'anthropic-sdk',
      label: '@anthropic-ai/sdk messages',
      runtime,
      packages: ['@anthropic-ai/sdk'],
      endpoint: '/v1/messages',
      model: CLAUDE_MODEL,
      cases: BRIDGEABLE,
    },
  ];
}

function agents(runtime: Runtime['name']): ClientSpec {
  return {
    client: 'openai-agents',
    label: '@openai/agents run()',
    runtime,
    packages: ['@openai/agents', 'openai'],
    endpoint: '/v1/responses',
    model: OPENAI_MODEL,
    cases: ['text', 'stream', 'tool', 'toolStream', 'brokenBase', 'bridged', 'bridgedTool'],
  };
}

function langchain(version: '1.5' | '1.6'): ClientSpec[] {
  const pkg = version === '1.5' ? 'lc-openai-1-5' : '@langchain/openai';
  return [
    {
      client: `langchain-${version}-chat`,
      label: 'ChatOpenAI',
      runtime: 'node24',
      packages: [pkg, '@langchain/core'],
      endpoint: '/v1/chat/completions',
      model: OPENAI_MODEL,
      cases: CHAT,
    },
    {
      client: `langchain-${version}-responses`,
      label: 'ChatOpenAI useResponsesApi',
      runtime: 'node24',
      packages: [pkg, '@langchain/core'],
      endpoint: '/v1/responses',
      model: OPENAI_MODEL,
      cases: BRIDGEABLE,
    },
  ];
}

export const MATRIX: ClientSpec[] = [
  ...official('node20'),
  ...official('node24'),
  ...aiSdk('node20'),
  ...aiSdk('node24'),
  ...langchain('1.5'),
  ...langchain('1.6'),
  {
    client: 'langchain-anthropic',
    label: 'ChatAnthropic',
    runtime: 'node24',
    packages: ['@langchain/anthropic', '@langchain/core'],
    endpoint: '/v1/messages',
    model: CLAUDE_MODEL,
    cases: BRIDGEABLE,
  },
  agents('node20'),
  agents('node24'),
  {
    client: 'curl',
    label: 'curl',
    runtime: 'node20',
    packages: [],
    endpoint: '/v1/chat/completions',
    model: OPENAI_MODEL,
    cases: ['text', 'stream', 'tool', 'brokenBase', 'bridged', 'messages'],
  },
];

/** The proxy (key group) a case runs through. */
export function proxyFor(spec: ClientSpec, c: CaseName): ProxyName {
  if (isBridged(c)) return 'chatOnly';
  if (c === 'messages' || spec.endpoint === '/v1/messages') return 'claude';
  return 'default';
}

/** The endpoint the client's requests must reach the proxy on (after path normalisation). */
export function endpointFor(spec: ClientSpec, c: CaseName): Endpoint {
  if (spec.client === 'curl')
    return c === 'bridged' ? '/v1/responses' : c === 'messages' ? '/v1/messages' : '/v1/chat/completions';
  return spec.endpoint;
}

export const isStream = (c: CaseName): boolean => c === 'stream' || c === 'bridgedStream' || c === 'toolStream';
export const isTool = (c: CaseName): boolean => c === 'tool' || c === 'toolStream' || c === 'bridgedTool';
export const isBridged = (c: CaseName): boolean => c === 'bridged' || c === 'bridgedStream' || c === 'bridgedTool';

export const TOOL_PROMPT = 'use get_weather for Paris';
/** The simulator builds string arguments from the start of the user's text. */
export const TOOL_ARGS = { city: TOOL_PROMPT };
export const TOOL_RESULT = `22C and sunny in ${TOOL_PROMPT}`;
