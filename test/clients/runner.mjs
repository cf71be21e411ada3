// Child process of test/clients/libraries.test.ts: drives one real client library
// per request, in the Node the library needs (the project's Node 20 for the root
// devDependencies, the provisioned Node 24 for the cache of scripts/provision-clients.mjs).
// Plain JavaScript on purpose: it runs on Node 20 without a TypeScript loader.
//
// Protocol (IPC): the parent sends { id, client, caseName, env }, the child answers
// { id, ok: true, result } or { id, ok: false, error }. A result always carries the
// HTTP requests the library made (seen through a wrapped globalThis.fetch) so the
// parent can match them against the proxy's traffic log.
import { execFile } from 'node:child_process';

const LOADER = process.env.LOOPGATE_CLIENTS_LOADER; // load.mjs of the cache tree, or unset for the repo's own tree

let loader;
async function load(specifier) {
  if (!LOADER) return import(specifier);
  loader ??= await import(LOADER);
  return loader.load(specifier);
}

// ---- every HTTP request a library makes, and a guard against anything but loopback
let requests = [];
let external = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async function recordingFetch(input, init) {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const method = (
    init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET')
  ).toUpperCase();
  const u = new URL(url);
  if (u.hostname !== '127.0.0.1') {
    external.push(`${method} ${url}`);
    throw new TypeError(`test runner: blocked a request to ${u.origin} (only the local proxy may be called)`);
  }
  const entry = { method, url, status: 0, rewrite: null, bridge: null, contentType: null };
  requests.push(entry);
  const res = await realFetch(input, init);
  entry.status = res.status;
  entry.rewrite = res.headers.get('x-loopgate-rewrite');
  entry.bridge = res.headers.get('x-loopgate-bridge');
  entry.contentType = res.headers.get('content-type');
  return res;
};

// ---- shared scenario data (the parent asserts on what comes back)
const TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  schema: {
    type: 'object',
    properties: { city: { type: 'string', description: 'City name' } },
    required: ['city'],
    additionalProperties: false,
  },
};
const weather = (city) => `22C and sunny in ${city}`;

/** Collects what a streaming library hands out, chunk by chunk. */
function collector() {
  const parts = [];
  return {
    add(t) {
      if (typeof t === 'string' && t !== '') parts.push(t);
    },
    done(extra = {}) {
      return { text: parts.join(''), chunks: parts.length, ...extra };
    },
  };
}

// ---- official openai
async function openaiClient(env, baseURL, key = 'default') {
  const { default: OpenAI } = await load('openai');
  return new OpenAI({
    baseURL: baseURL ?? `${env.proxies[key]}/v1`,
    apiKey: env.token,
    maxRetries: 0,
    timeout: env.timeoutMs,
  });
}

const openaiTools = [
  { type: 'function', function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.schema } },
];
const responsesTools = [
  { type: 'function', name: TOOL.name, description: TOOL.description, parameters: TOOL.schema, strict: true },
];

const openaiChat = {
  async text(env) {
    const c = await openaiClient(env);
    const r = await c.chat.completions.create({ model: env.model, messages: [{ role: 'user', content: env.prompt }] });
    return { text: r.choices[0].message.content };
  },
  async stream(env) {
    const c = await openaiClient(env);
    const out = collector();
    const s = await c.chat.completions.create({
      model: env.model,
      messages: [{ role: 'user', content: env.prompt }],
      stream: true,
    });
    for await (const chunk of s) out.add(chunk.choices[0]?.delta?.content);
    return out.done();
  },
  async tool(env) {
    const c = await openaiClient(env);
    const messages = [{ role: 'user', content: env.prompt }];
    const first = await c.chat.completions.create({ model: env.model, messages, tools: openaiTools });
    const call = first.choices[0].message.tool_calls?.[0];
    if (!call) return { text: first.choices[0].message.content, toolCalls: [] };
    const args = JSON.parse(call.function.arguments);
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: weather(args.city) });
    const second = await c.chat.completions.create({ model: env.model, messages, tools: openaiTools });
    return { text: second.choices[0].message.content, toolCalls: [{ name: call.function.name, args }] };
  },
  async brokenBase(env) {
    const c = await openaiClient(env, `${env.proxies.default}/v1/v1`);
    const r = await c.chat.completions.create({ model: env.model, messages: [{ role: 'user', content: env.prompt }] });
    return { text: r.choices[0].message.content };
  },
};

const openaiResponses = {
  async text(env) {
    const c = await openaiClient(env);
    const r = await c.responses.create({ model: env.model, input: env.prompt });
    return { text: r.output_text };
  },
  async stream(env) {
    const c = await openaiClient(env);
    const out = collector();
    const s = await c.responses.create({ model: env.model, input: env.prompt, stream: true });
    for await (const e of s) if (e.type === 'response.output_text.delta') out.add(e.delta);
    return out.done();
  },
  async tool(env) {
    const c = await openaiClient(env, undefined, env.proxyKey);
    const input = [{ role: 'user', content: env.prompt }];
    const first = await c.responses.create({ model: env.model, input, tools: responsesTools });
    const call = first.output.find((o) => o.type === 'function_call');
    if (!call) return { text: first.output_text, toolCalls: [] };
    const args = JSON.parse(call.arguments);
    input.push(...first.output, { type: 'function_call_output', call_id: call.call_id, output: weather(args.city) });
    const second = await c.responses.create({ model: env.model, input, tools: responsesTools });
    return { text: second.output_text, toolCalls: [{ name: call.name, args }] };
  },
  async brokenBase(env) {
    const c = await openaiClient(env, `${env.proxies.default}/v1/v1`);
    const r = await c.responses.create({ model: env.model, input: env.prompt });
    return { text: r.output_text };
  },
  async bridged(env) {
    const c = await openaiClient(env, undefined, 'chatOnly');
    const r = await c.responses.create({ model: env.model, input: env.prompt });
    return { text: r.output_text };
  },
  async bridgedStream(env) {
    const c = await openaiClient(env, undefined, 'chatOnly');
    const out = collector();
    const s = await c.responses.create({ model: env.model, input: env.prompt, stream: true });
    for await (const e of s) if (e.type === 'response.output_text.delta') out.add(e.delta);
    return out.done();
  },
};

// ---- official @anthropic-ai/sdk
async function anthropicClient(env, baseURL) {
  const { default: Anthropic } = await load('@anthropic-ai/sdk');
  return new Anthropic({ baseURL, apiKey: env.token, maxRetries: 0, timeout: env.timeoutMs, logLevel: 'error' });
}
const anthropicTools = [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.schema }];
const anthropicText = (m) =>
  m.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('');

/** One text request at `base`, plain or streamed: the same calls natively and bridged. */
async function anthropicText1(env, base) {
  const c = await anthropicClient(env, base);
  return {
    text: anthropicText(
      await c.messages.create({ model: env.model, max_tokens: 256, messages: [{ role: 'user', content: env.prompt }] }),
    ),
  };
}
async function anthropicStream(env, base) {
  const c = await anthropicClient(env, base);
  const out = collector();
  const s = await c.messages.create({
    model: env.model,
    max_tokens: 256,
    messages: [{ role: 'user', content: env.prompt }],
    stream: true,
  });
  for await (const e of s) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') out.add(e.delta.text);
  return out.done();
}

const anthropicSdk = {
  text: (env) => anthropicText1(env, env.proxies.claude),
  stream: (env) => anthropicStream(env, env.proxies.claude),
  async tool(env) {
    const c = await anthropicClient(env, env.proxies.claude);
    const messages = [{ role: 'user', content: env.prompt }];
    const first = await c.messages.create({ model: env.model, max_tokens: 256, messages, tools: anthropicTools });
    const call = first.content.find((b) => b.type === 'tool_use');
    if (!call) return { text: anthropicText(first), toolCalls: [] };
    messages.push(
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: weather(call.input.city) }] },
    );
    const second = await c.messages.create({ model: env.model, max_tokens: 256, messages, tools: anthropicTools });
    return { text: anthropicText(second), toolCalls: [{ name: call.name, args: call.input }] };
  },
  // The SDK appends /v1/messages itself: a base that already ends in /v1 is the classic mistake.
  brokenBase: (env) => anthropicText1(env, `${env.proxies.claude}/v1`),
  bridged: (env) => anthropicText1(env, env.proxies.chatOnly),
  bridgedStream: (env) => anthropicStream(env, env.proxies.chatOnly),
};

// ---- Vercel AI SDK (ai + @ai-sdk/*); the same code drives v6 and v7
async function aiTool() {
  const ai = await load('ai');
  const { z } = await load('zod');
  const seen = [];
  const tools = {
    [TOOL.name]: ai.tool({
      description: TOOL.description,
      inputSchema: z.object({ city: z.string().describe('City name') }),
      execute: async ({ city }) => {
        seen.push({ name: TOOL.name, args: { city } });
        return weather(city);
      },
    }),
  };
  return { ai, tools, seen };
}

function aiSdk(makeModel, { brokenBase, bridgeKey } = {}) {
  const text = async (env, proxyKey, base) => {
    const ai = await load('ai');
    const r = await ai.generateText({ model: await makeModel(env, proxyKey, base), prompt: env.prompt, maxRetries: 0 });
    return { text: r.text, finishReason: r.finishReason };
  };
  const stream = async (env, proxyKey) => {
    const ai = await load('ai');
    const errors = [];
    const r = ai.streamText({
      model: await makeModel(env, proxyKey),
      prompt: env.prompt,
      maxRetries: 0,
      onError: ({ error }) => errors.push(String(error?.message ?? error)),
    });
    const out = collector();
    for await (const t of r.textStream) out.add(t);
    if (errors.length) throw new Error(errors.join('; '));
    return out.done();
  };
  const cases = {
    text: (env) => text(env),
    stream: (env) => stream(env),
    async tool(env) {
      const { ai, tools, seen } = await aiTool();
      const r = await ai.generateText({
        model: await makeModel(env),
        prompt: env.prompt,
        tools,
        stopWhen: ai.stepCountIs(3),
        maxRetries: 0,
      });
      return { text: r.text, toolCalls: seen, steps: r.steps.length };
    },
    async toolStream(env) {
      const { ai, tools, seen } = await aiTool();
      const errors = [];
      const r = ai.streamText({
        model: await makeModel(env),
        prompt: env.prompt,
        tools,
        stopWhen: ai.stepCountIs(3),
        maxRetries: 0,
        onError: ({ error }) => errors.push(String(error?.message ?? error)),
      });
      const out = collector();
      for await (const t of r.textStream) out.add(t);
      if (errors.length) throw new Error(errors.join('; '));
      return out.done({ toolCalls: seen });
    },
  };
  if (brokenBase) cases.brokenBase = (env) => text(env, undefined, brokenBase(env));
  if (bridgeKey) {
    cases.bridged = (env) => text(env, bridgeKey);
    cases.bridgedStream = (env) => stream(env, bridgeKey);
  }
  return cases;
}

const aiOpenAI = async (env, proxyKey = 'default', baseURL) => {
  const { createOpenAI } = await load('@ai-sdk/openai');
  return createOpenAI({ baseURL: baseURL ?? `${env.proxies[proxyKey]}/v1`, apiKey: env.token });
};
const aiResponses = aiSdk(async (env, k, b) => (await aiOpenAI(env, k, b)).responses(env.model), {
  brokenBase: (env) => `${env.proxies.default}/v1/v1`,
  bridgeKey: 'chatOnly',
});
const aiChat = aiSdk(async (env, k, b) => (await aiOpenAI(env, k, b)).chat(env.model), {
  brokenBase: (env) => `${env.proxies.default}/v1/v1`,
});
const aiCompatible = aiSdk(
  async (env, k = 'default', b) => {
    const { createOpenAICompatible } = await load('@ai-sdk/openai-compatible');
    return createOpenAICompatible({
      name: 'loopgate',
      baseURL: b ?? `${env.proxies[k]}/v1`,
      apiKey: env.token,
      includeUsage: true,
    }).chatModel(env.model);
  },
  { brokenBase: (env) => `${env.proxies.default}/v1/v1` },
);
const aiAnthropic = aiSdk(
  async (env, k = 'claude', b) => {
    const { createAnthropic } = await load('@ai-sdk/anthropic');
    // @ai-sdk/anthropic's base includes /v1 (default https://api.anthropic.com/v1).
    return createAnthropic({ baseURL: b ?? `${env.proxies[k]}/v1`, apiKey: env.token })(env.model);
  },
  // The mistake here is the other way round: the Anthropic-style origin without /v1.
  { brokenBase: (env) => env.proxies.claude, bridgeKey: 'chatOnly' },
);

// ---- LangChain JS (@langchain/openai ChatOpenAI, @langchain/anthropic ChatAnthropic)
const lcText = (m) =>
  typeof m.text === 'string'
    ? m.text
    : typeof m.content === 'string'
      ? m.content
      : m.content
          .filter((b) => b.type === 'text')
          .map((b) => b.text)
          .join('');

function langchain(openaiModule, useResponsesApi) {
  const make = async (env, proxyKey = 'default', baseURL) => {
    const { ChatOpenAI } = await load(openaiModule);
    return new ChatOpenAI({
      model: env.model,
      apiKey: env.token,
      maxRetries: 0,
      timeout: env.timeoutMs,
      useResponsesApi,
      configuration: { baseURL: baseURL ?? `${env.proxies[proxyKey]}/v1` },
    });
  };
  const stream = async (env, proxyKey) => {
    const out = collector();
    for await (const chunk of await (await make(env, proxyKey)).stream(env.prompt)) out.add(lcText(chunk));
    return out.done();
  };
  const cases = {
    text: async (env) => ({ text: lcText(await (await make(env)).invoke(env.prompt)) }),
    stream: (env) => stream(env),
    tool: async (env) =>
      lcToolRoundTrip(
        env,
        (await make(env)).bindTools([
          { type: 'function', function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.schema } },
        ]),
      ),
    brokenBase: async (env) => ({
      text: lcText(await (await make(env, 'default', `${env.proxies.default}/v1/v1`)).invoke(env.prompt)),
    }),
  };
  if (useResponsesApi) {
    cases.bridged = async (env) => ({ text: lcText(await (await make(env, 'chatOnly')).invoke(env.prompt)) });
    cases.bridgedStream = (env) => stream(env, 'chatOnly');
  }
  return cases;
}

/** The weather tool asked for, run, and answered, through a LangChain model with the tool bound. */
async function lcToolRoundTrip(env, model) {
  const { HumanMessage, ToolMessage } = await load('@langchain/core/messages');
  const messages = [new HumanMessage(env.prompt)];
  const first = await model.invoke(messages);
  const call = first.tool_calls?.[0];
  if (!call) return { text: lcText(first), toolCalls: [] };
  messages.push(first, new ToolMessage({ tool_call_id: call.id, content: weather(call.args.city) }));
  const second = await model.invoke(messages);
  return { text: lcText(second), toolCalls: [{ name: call.name, args: call.args }] };
}

const langchainAnthropic = (() => {
  const make = async (env, origin) => {
    const { ChatAnthropic } = await load('@langchain/anthropic');
    return new ChatAnthropic({
      model: env.model,
      apiKey: env.token,
      anthropicApiUrl: origin,
      maxRetries: 0,
      maxTokens: 256,
    });
  };
  const stream = async (env, origin) => {
    const out = collector();
    for await (const chunk of await (await make(env, origin)).stream(env.prompt)) out.add(lcText(chunk));
    return out.done();
  };
  return {
    text: async (env) => ({ text: lcText(await (await make(env, env.proxies.claude)).invoke(env.prompt)) }),
    stream: (env) => stream(env, env.proxies.claude),
    tool: async (env) =>
      lcToolRoundTrip(
        env,
        (await make(env, env.proxies.claude)).bindTools([
          { name: TOOL.name, description: TOOL.description, input_schema: TOOL.schema },
        ]),
      ),
    brokenBase: async (env) => ({
      text: lcText(await (await make(env, `${env.proxies.claude}/v1`)).invoke(env.prompt)),
    }),
    bridged: async (env) => ({ text: lcText(await (await make(env, env.proxies.chatOnly)).invoke(env.prompt)) }),
    bridgedStream: (env) => stream(env, env.proxies.chatOnly),
  };
})();

// ---- OpenAI Agents SDK (@openai/agents), Responses API by default
async function agentsRun(env, { proxyKey = 'default', baseURL, withTool = false, stream = false } = {}) {
  const agents = await load('@openai/agents');
  agents.setTracingDisabled(true);
  const { z } = await load('zod');
  const seen = [];
  const tools = withTool
    ? [
        agents.tool({
          name: TOOL.name,
          description: TOOL.description,
          parameters: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            seen.push({ name: TOOL.name, args: { city } });
            return weather(city);
          },
        }),
      ]
    : [];
  const agent = new agents.Agent({
    name: 'Loopgate conformance',
    instructions: 'Answer briefly.',
    model: env.model,
    tools,
  });
  const provider = new agents.OpenAIProvider({
    apiKey: env.token,
    baseURL: baseURL ?? `${env.proxies[proxyKey]}/v1`,
    useResponses: true,
  });
  const runner = new agents.Runner({ modelProvider: provider, tracingDisabled: true });
  if (!stream) {
    const r = await runner.run(agent, env.prompt, { maxTurns: 4 });
    return { text: r.finalOutput, toolCalls: seen };
  }
  const r = await runner.run(agent, env.prompt, { maxTurns: 4, stream: true });
  const out = collector();
  for await (const t of r.toTextStream()) out.add(t);
  await r.completed;
  if (r.error) throw r.error;
  return out.done({ toolCalls: seen, finalOutput: r.finalOutput });
}
const openaiAgents = {
  text: (env) => agentsRun(env),
  stream: (env) => agentsRun(env, { stream: true }),
  tool: (env) => agentsRun(env, { withTool: true }),
  toolStream: (env) => agentsRun(env, { withTool: true, stream: true }),
  brokenBase: (env) => agentsRun(env, { baseURL: `${env.proxies.default}/v1/v1` }),
  bridged: (env) => agentsRun(env, { proxyKey: 'chatOnly' }),
  bridgedTool: (env) => agentsRun(env, { proxyKey: 'chatOnly', withTool: true }),
};

// ---- curl: the requests the README tells people to paste
function curl(args, env) {
  return new Promise((resolve, reject) => {
    const marker = '\n__LOOPGATE_STATUS__';
    execFile(
      'curl',
      [
        '-sS',
        '-N',
        '--max-time',
        String(Math.ceil(env.timeoutMs / 1000)),
        '-D',
        '-',
        '-w',
        `${marker}%{http_code}`,
        ...args,
      ],
      { timeout: env.timeoutMs + 2000, maxBuffer: 4 << 20 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`curl failed: ${err.message} ${stderr}`));
        const at = stdout.lastIndexOf(marker);
        const status = Number(stdout.slice(at + marker.length));
        const raw = stdout.slice(0, at);
        const split = raw.indexOf('\r\n\r\n');
        const head = raw.slice(0, split);
        const body = raw.slice(split + 4);
        const header = (name) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? null;
        resolve({ status, body, header });
      },
    );
  });
}
async function curlPost(env, url, body, extraHeaders = []) {
  const headers = [
    '-H',
    `Authorization: Bearer ${env.token}`,
    '-H',
    'Content-Type: application/json',
    ...extraHeaders.flatMap((h) => ['-H', h]),
  ];
  const r = await curl([...headers, '-d', JSON.stringify(body), url], env);
  requests.push({
    method: 'POST',
    url,
    status: r.status,
    rewrite: r.header('x-loopgate-rewrite'),
    bridge: r.header('x-loopgate-bridge'),
    contentType: r.header('content-type'),
  });
  if (r.status !== 200) throw new Error(`curl ${url}: HTTP ${r.status} ${r.body.slice(0, 500)}`);
  return r;
}
function sseData(body) {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim())
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d));
}
const curlClient = {
  async text(env) {
    const r = await curlPost(env, `${env.proxies.default}/v1/chat/completions`, {
      model: env.model,
      messages: [{ role: 'user', content: env.prompt }],
    });
    return { text: JSON.parse(r.body).choices[0].message.content };
  },
  async stream(env) {
    const r = await curlPost(env, `${env.proxies.default}/v1/chat/completions`, {
      model: env.model,
      stream: true,
      messages: [{ role: 'user', content: env.prompt }],
    });
    const out = collector();
    for (const e of sseData(r.body)) out.add(e.choices?.[0]?.delta?.content);
    return out.done({ sawDone: r.body.includes('data: [DONE]') });
  },
  async tool(env) {
    const url = `${env.proxies.default}/v1/chat/completions`;
    const messages = [{ role: 'user', content: env.prompt }];
    const first = JSON.parse((await curlPost(env, url, { model: env.model, messages, tools: openaiTools })).body)
      .choices[0].message;
    const call = first.tool_calls?.[0];
    if (!call) return { text: first.content, toolCalls: [] };
    const args = JSON.parse(call.function.arguments);
    messages.push(first, { role: 'tool', tool_call_id: call.id, content: weather(args.city) });
    const second = JSON.parse((await curlPost(env, url, { model: env.model, messages, tools: openaiTools })).body)
      .choices[0].message;
    return { text: second.content, toolCalls: [{ name: call.function.name, args }] };
  },
  async brokenBase(env) {
    const r = await curlPost(env, `${env.proxies.default}/v1/v1/chat/completions`, {
      model: env.model,
      messages: [{ role: 'user', content: env.prompt }],
    });
    return { text: JSON.parse(r.body).choices[0].message.content };
  },
  async bridged(env) {
    const r = await curlPost(env, `${env.proxies.chatOnly}/v1/responses`, { model: env.model, input: env.prompt });
    const body = JSON.parse(r.body);
    return {
      text: body.output
        .filter((o) => o.type === 'message')
        .flatMap((o) => o.content)
        .map((c) => c.text)
        .join(''),
    };
  },
  async messages(env) {
    const r = await curlPost(
      env,
      `${env.proxies.claude}/v1/messages`,
      { model: 'claude-sonnet-4-6', max_tokens: 256, messages: [{ role: 'user', content: env.prompt }] },
      ['anthropic-version: 2023-06-01'],
    );
    return { text: anthropicText(JSON.parse(r.body)) };
  },
};

const CLIENTS = {
  'openai-chat': openaiChat,
  'openai-responses': openaiResponses,
  'anthropic-sdk': anthropicSdk,
  'ai-responses': aiResponses,
  'ai-chat': aiChat,
  'ai-compatible': aiCompatible,
  'ai-anthropic': aiAnthropic,
  'langchain-1.5-chat': langchain('lc-openai-1-5', false),
  'langchain-1.5-responses': langchain('lc-openai-1-5', true),
  'langchain-1.6-chat': langchain('@langchain/openai', false),
  'langchain-1.6-responses': langchain('@langchain/openai', true),
  'langchain-anthropic': langchainAnthropic,
  'openai-agents': openaiAgents,
  curl: curlClient,
};

async function runCase({ client, caseName, env }) {
  const impl = CLIENTS[client]?.[caseName];
  if (!impl) throw new Error(`runner has no case ${client}/${caseName}`);
  requests = [];
  external = [];
  const result = await impl(env);
  return { ...result, requests, external };
}

function describeError(err) {
  const parts = [err?.stack ?? String(err)];
  for (let e = err?.cause, depth = 0; e && depth < 3; e = e.cause, depth++) parts.push(`cause: ${e?.message ?? e}`);
  if (err?.status) parts.push(`status: ${err.status}`);
  if (err?.responseBody) parts.push(`responseBody: ${err.responseBody}`);
  if (err?.error && typeof err.error === 'object') parts.push(`error: ${JSON.stringify(err.error)}`);
  return parts.join('\n');
}

process.on('message', async (msg) => {
  try {
    const result = await runCase(msg);
    process.send({ id: msg.id, ok: true, result });
  } catch (err) {
    process.send({ id: msg.id, ok: false, error: describeError(err), requests, external });
  }
});
process.send({ ready: true, node: process.version });
