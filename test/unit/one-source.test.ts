// Issue 12, one source for each concept: key shapes, credential headers, the
// constant-time compare, the Anthropic error-type table, the upstream-error
// reader, the GET /models list parser and the protocol table (paths, titles,
// minimal requests) each have one definition in proxy/rules/; the places that
// used to keep their own copy now answer from it. Issue 24: each protocol's
// paths, envelope, usage shape, stream events and text parts live in its own
// module (rules/protocols/), and no other source spells them out.
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOURCE_FOLDERS } from '../source-folders.js';
import { PROTOCOL_INFO } from '../../extension/protocol-trials.js';
import { parseModels } from '../../extension/views/explorer-list.js';
import { CHAT_PATH } from '../../proxy/bridge/index.js';
import { bridgeKindForPath, bridgeLabel } from '../../proxy/bridge/types.js';
import { formatModelTable } from '../../cli/models.js';
import { runDoctor } from '../../client/doctor-checks.js';
import { modelProtocols, parseModelList } from '../../rules/wire/model-list.js';
import {
  ANTHROPIC_VERSION,
  ENDPOINT_TYPE,
  PROTOCOL_ORDER,
  PROTOCOL_TABLE,
  PROTOCOLS,
  answerUsage,
  bridgedFrom,
  modelsList,
  envelopeFor,
  envelopeForTarget,
  minimalFields,
  minimalRequest,
  outputText,
  pathProtocol,
  protocolOfEndpointType,
  streamCompleted,
  type Protocol,
  type ProtocolModule,
} from '../../rules/protocols/index.js';
import { defaultFixture, startSimulator } from '../../simulator/index.js';
import { chatProtocol } from '../../simulator/chat-endpoint.js';
import { messagesProtocol } from '../../simulator/messages-endpoint.js';
import { responsesProtocol } from '../../simulator/responses-endpoint.js';
import { runCli } from '../cli/io.js';
import { translateError } from '../../proxy/bridge/index.js';
import { upstreamRequestHeaders, CREDENTIAL_HEADERS as STRIPPED } from '../../proxy/pipeline/headers.js';
import { secretEquals } from '../../rules/access/constant-time.js';
import { CREDENTIAL_HEADERS, RESPONSE_CREDENTIAL_HEADERS } from '../../rules/redaction/credential-headers.js';
import { lintConfig, LINT_CODES } from '../../rules/project/config-lint/index.js';
import { extraParams, parseErrorBody } from '../../rules/diagnosis/diagnose.js';
import { anthropicErrorType, errorBody, readErrorEnvelope } from '../../rules/diagnosis/proxy-errors.js';
import { createRedactor, DENYLISTED_HEADERS } from '../../rules/redaction/redact.js';
import {
  looksKeyShaped,
  looksLikeProviderKey,
  PROVIDER_KEY_SHAPES,
  SECRET_PATTERNS,
} from '../../rules/redaction/secret-patterns.js';
import { CREDENTIAL_HEADERS as SIM_CREDENTIAL_HEADERS } from '../../simulator/index.js';
import { errorBody as simErrorBody, SimError } from '../../simulator/relay-errors.js';
import { type ModelEntry } from '../../core/routing-facts.js';
import { sharedForAll } from '../kit/lifecycle.js';
import { startUpstream, type Upstream } from '../kit/upstream.js';

const SAMPLES: Record<string, string> = {
  'anthropic-key': 'sk-ant-api03-Q7fz2LmN9pXr4TbV8wKc',
  'openai-project-key': 'sk-proj-Q7fz2LmN9pXr4TbV8wKc',
  'sk-key': 'sk-Q7fz2LmN9pXr4TbV8wKc',
  'google-key': 'AIzaSyQ7fz2LmN9pXr4TbV8wKcQ7fz2LmN9pX',
};

describe('key shapes: one table', () => {
  it('every shape is recognised by the proxy, scrubbed by redaction and reported by the language server', () => {
    const r = createRedactor({ secrets: [], hashKey: new Uint8Array(32) });
    for (const shape of PROVIDER_KEY_SHAPES) {
      const key = SAMPLES[shape.name]!;
      expect(key.startsWith(shape.prefix), shape.name).toBe(true);
      expect(looksLikeProviderKey(key), shape.name).toBe(true);
      expect(looksKeyShaped(key), shape.name).toBe(true);
      expect(
        SECRET_PATTERNS.some((p) => p.name === shape.name && new RegExp(p.pattern.source).test(key)),
        shape.name,
      ).toBe(true);
      expect(r.string(`x ${key} y`), shape.name).not.toContain(key);
      const found = lintConfig(`${shape.envVar}=${key}\n`, { fileName: '.env' }, {});
      expect(
        found.some((d) => d.code === LINT_CODES.apiKeyInFile),
        shape.name,
      ).toBe(true);
    }
  });

  it('the loose shape (placeholders) is wider than the real one, as the model rule had it', () => {
    expect(looksKeyShaped('sk-xxxxxxxx')).toBe(true);
    expect(looksLikeProviderKey('sk-xxxxxxxx')).toBe(false);
    expect(looksKeyShaped('sk-xxxxxxx')).toBe(false);
    expect(looksKeyShaped('AIza' + 'x'.repeat(20))).toBe(true);
    expect(looksKeyShaped('AIza' + 'x'.repeat(19))).toBe(false);
  });
});

describe('credential headers: one list', () => {
  it('the proxy strips, the simulator fingerprints and redaction replaces the same request headers', () => {
    expect([...STRIPPED].sort()).toEqual([...CREDENTIAL_HEADERS].sort());
    expect([...SIM_CREDENTIAL_HEADERS].sort()).toEqual([...CREDENTIAL_HEADERS].sort());
    // Redaction also sees responses: the request list plus set-cookie.
    expect([...DENYLISTED_HEADERS].sort()).toEqual([...CREDENTIAL_HEADERS, ...RESPONSE_CREDENTIAL_HEADERS].sort());
  });

  it('no listed header reaches the upstream; exactly one credential is injected', () => {
    const raw = CREDENTIAL_HEADERS.flatMap((h) => [h, 'client-secret']);
    const out = upstreamRequestHeaders(raw, 'real-key', false);
    expect(Object.values(out)).not.toContain('client-secret');
    expect(out.authorization).toBe('Bearer real-key');
  });
});

describe('constant-time compare: one helper', () => {
  it('equal, different, different length, absent', () => {
    expect(secretEquals('lg-local-abc', 'lg-local-abc')).toBe(true);
    expect(secretEquals('lg-local-abc', 'lg-local-abd')).toBe(false);
    expect(secretEquals('lg-local-abc', 'lg-local-abcd')).toBe(false);
    expect(secretEquals('lg-local-abc', undefined)).toBe(false);
  });
});

describe('Anthropic error types: one table', () => {
  it('503 model_not_found is not_found_error for the bridge and the table (the bridge review fix)', () => {
    expect(anthropicErrorType(503, 'model_not_found')).toBe('not_found_error');
    const relay = Buffer.from(
      JSON.stringify({ error: { message: 'no channel', type: 'invalid_request_error', code: 'model_not_found' } }),
    );
    expect(JSON.parse(translateError('messages', 503, relay).body).error.type).toBe('not_found_error');
  });

  it("regression: the proxy's own Anthropic errors used the shorter table (402 and 529 came out as api_error)", () => {
    expect(JSON.parse(errorBody('anthropic', 402, 'x', 'm')).error.type).toBe('billing_error');
    expect(JSON.parse(errorBody('anthropic', 529, 'x', 'm')).error.type).toBe('overloaded_error');
    expect(JSON.parse(errorBody('anthropic', 503, 'x', 'm')).error.type).toBe('overloaded_error');
    expect(JSON.parse(errorBody('anthropic', 418, 'x', 'm')).error.type).toBe('api_error');
  });

  it('the simulator takes the standard types from the same table', () => {
    const sim = (code: ConstructorParameters<typeof SimError>[0]) =>
      (simErrorBody(new SimError(code, 'm'), 'anthropic', 'rid') as { error: { type: string } }).error.type;
    expect(sim('service_unavailable')).toBe('overloaded_error');
    expect(sim('invalid_api_key')).toBe('authentication_error');
    expect(sim('bad_gateway')).toBe('api_error');
    expect(sim('rate_limit_exceeded')).toBe('rate_limit_error');
    // Where the relay writes its own code into error.type, the simulator does too.
    expect(sim('model_not_found')).toBe('model_not_found');
  });
});

describe('upstream error bodies: one reader', () => {
  it('regression: diagnosis read only {error:{…}}; it now reads what the bridge read (a bare object, a numeric code)', () => {
    expect(parseErrorBody(503, '{"message":"no channel","code":"model_not_found"}')).toMatchObject({
      status: 503,
      code: 'model_not_found',
    });
    expect(parseErrorBody(500, '{"error":{"message":"m","code":500}}').code).toBe('500');
    expect(parseErrorBody(400, '{"error":{"type":"","code":""}}')).toEqual({ status: 400 });
  });

  it('both envelopes, and nothing from a non-JSON body', () => {
    expect(readErrorEnvelope('{"type":"error","error":{"type":"not_found_error","message":"m"}}')).toEqual({
      type: 'not_found_error',
      message: 'm',
    });
    expect(readErrorEnvelope(Buffer.from('{"error":{"message":"m","type":"t","param":"p","code":"c"}}'))).toEqual({
      message: 'm',
      type: 't',
      param: 'p',
      code: 'c',
    });
    expect(readErrorEnvelope('<html>')).toBeUndefined();
  });
});

describe('the /models list and the protocol table: one source each', () => {
  const KEY = 'sk-one-source-0000000000000000000000';
  let body = '';
  let relay: Upstream;
  let upstream = '';

  beforeAll(async () => {
    // A relay that answers GET /v1/models with `body` and 404 to everything else.
    relay = await startUpstream();
    relay.on({ method: 'GET', path: '/v1/models' }).handle((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    relay.on({}).reply(404, { error: { message: 'no such route', type: 'invalid_request_error', code: 'not_found' } });
    upstream = relay.url;
  });
  afterAll(() => relay.close());

  /** What doctor, `loopgate models --json` and the Model Explorer make of one /models answer. */
  async function readers(text: string) {
    body = text;
    const report = await runDoctor({ upstream, key: KEY, timeoutMs: 5_000 });
    const cli = await runCli(['models', '--upstream', upstream, '--json'], { LOOPGATE_API_KEY: KEY });
    return {
      rules: parseModelList(text),
      doctor: report.steps.find((s) => s.name === '3. GET /models')!,
      cli: { code: cli.code, models: cli.code === 0 ? (JSON.parse(cli.out) as ModelEntry[]) : undefined, err: cli.err },
      explorer: parseModels(text),
    };
  }

  const LISTS: Record<string, { text: string; ids: string[] }> = {
    'a plain list': {
      text: JSON.stringify({
        object: 'list',
        data: [
          {
            id: 'gpt-4o-mini',
            object: 'model',
            owned_by: 'openai',
            supported_endpoint_types: ['openai', 'openai-response'],
          },
          { id: 'claude-x', owned_by: 'anthropic' },
        ],
      }),
      ids: ['gpt-4o-mini', 'claude-x'],
    },
    'entries without a string id': {
      text: JSON.stringify({ data: [{ id: 'a' }, { owned_by: 'x' }, null, 'b', { id: 5 }, [], { id: 'c' }] }),
      ids: ['a', 'c'],
    },
    'supported_endpoint_types not an array': {
      text: JSON.stringify({
        data: [
          { id: 'a', supported_endpoint_types: 'anthropic' },
          { id: 'b', supported_endpoint_types: { openai: true } },
          { id: 'c', supported_endpoint_types: ['anthropic', 7, 'openai'] },
        ],
      }),
      ids: ['a', 'b', 'c'],
    },
  };

  for (const [name, { text, ids }] of Object.entries(LISTS)) {
    it(`doctor, \`loopgate models\` and the Model Explorer list the same models: ${name}`, async () => {
      const r = await readers(text);
      expect(r.rules.ok && r.rules.models.map((m) => m.id)).toEqual(ids);
      expect(r.doctor).toMatchObject({ result: 'ok', detail: `${ids.length} models: ${ids.join(', ')}` });
      expect(r.cli.code).toBe(0);
      expect(r.cli.models).toEqual(r.rules.ok && r.rules.models);
      expect(r.explorer.map((m) => m.id)).toEqual(ids);
    });
  }

  it('endpoint types: a non-array counts as absent everywhere, non-strings are dropped, known ones map to protocols in try order', async () => {
    const r = await readers(LISTS['supported_endpoint_types not an array']!.text);
    expect(r.cli.models!.map((m) => m.supported_endpoint_types)).toEqual([
      undefined,
      undefined,
      ['anthropic', 'openai'],
    ]);
    expect(r.explorer.map((m) => m.protocols)).toEqual([undefined, undefined, ['chat', 'messages']]);
    const table = formatModelTable(r.cli.models!).split('\n');
    expect(table[1]).toMatch(/^a\s*$/);
    expect(table[3]).toMatch(/^c\s+messages, chat$/);
    expect(modelProtocols({ supported_endpoint_types: ['openai-response', 'anthropic', 'openai', 'dall-e'] })).toEqual(
      PROTOCOL_ORDER,
    );
  });

  it('other fields pass through in the order the relay sent them; owned_by that is not a string is absent', () => {
    const r = parseModelList('{"data":[{"object":"model","id":"m","created":1,"owned_by":7}]}');
    expect(r.ok && r.models).toEqual([{ object: 'model', id: 'm', created: 1 }]);
    expect(r.ok && Object.keys(r.models[0]!)).toEqual(['object', 'id', 'created']);
    expect(parseModels('{"data":[{"id":"m","owned_by":7}]}')).toEqual([
      { id: 'm', ownedBy: 'unknown', protocols: undefined },
    ]);
  });

  it('an empty list is a list: doctor says the group has none, the others list none', async () => {
    const r = await readers('{"object":"list","data":[]}');
    expect(r.rules).toEqual({ ok: true, models: [] });
    expect(r.doctor).toMatchObject({ result: 'fail', detail: expect.stringContaining('has no models') });
    expect(r.cli.models).toEqual([]);
    expect(r.explorer).toEqual([]);
  });

  for (const [text, reason] of [
    ['<html>502 Bad Gateway</html>', 'not-json'],
    ['{"data":{}}', 'not-a-list'],
    ['{}', 'not-a-list'],
    ['[{"id":"m"}]', 'not-a-list'],
    ['null', 'not-a-list'],
  ] as const) {
    it(`not a model list (${reason}: ${text}): doctor and \`loopgate models\` say so, the Model Explorer lists none`, async () => {
      // Regression: doctor threw on {"data":{}} (models.map is not a function) and `loopgate models` printed {}.
      const r = await readers(text);
      expect(r.rules).toEqual({ ok: false, reason });
      expect(r.doctor).toMatchObject({
        result: 'fail',
        detail: 'The answer is not a JSON model list: is the URL the Model-Access API?',
      });
      expect(r.cli.code).toBe(1);
      expect(r.cli.err).toContain(`answered 200 but not with ${reason === 'not-json' ? 'JSON' : 'a model list'}`);
      expect(r.explorer).toEqual([]);
    });
  }

  it('titles, paths and endpoint types: the extension, the simulator and the bridge read the table', () => {
    for (const p of PROTOCOL_ORDER) {
      const row = PROTOCOL_TABLE[p];
      expect(PROTOCOL_INFO[p]).toMatchObject({ label: row.title, path: row.path, short: p });
      expect(row.path).toBe(`/v1${row.endpoint}`);
      expect(ENDPOINT_TYPE[p]).toBe(row.endpointType);
      expect(protocolOfEndpointType(row.endpointType)).toBe(p);
    }
    for (const m of [chatProtocol, responsesProtocol, messagesProtocol])
      expect([m.title, m.path]).toEqual([PROTOCOL_TABLE[m.protocol].title, PROTOCOL_TABLE[m.protocol].path]);
    expect(CHAT_PATH).toBe(PROTOCOL_TABLE.chat.path);
    expect(bridgeKindForPath(PROTOCOL_TABLE.responses.path)).toBe('responses');
    expect(bridgeKindForPath(PROTOCOL_TABLE.messages.path)).toBe('messages');
  });

  it('the diagnosis counts parameters beyond the same minimal request', () => {
    for (const p of PROTOCOL_ORDER) {
      const fields = Object.keys(minimalRequest(p, 'm', { stream: true, prompt: 'x' }));
      expect(extraParams(PROTOCOL_TABLE[p].path, [...fields, 'temperature'])).toEqual(['temperature']);
    }
    expect(minimalRequest('messages', 'm', { stream: false, prompt: 'x' })).toEqual({
      model: 'm',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'x' }],
      stream: false,
    });
  });

  describe('the minimal requests', () => {
    const sim = sharedForAll(() => startSimulator({ port: 0 }));

    for (const protocol of PROTOCOL_ORDER) {
      for (const stream of [false, true]) {
        it(`are accepted by the simulator: ${protocol}, stream ${stream}`, async () => {
          const key = defaultFixture.keys.find(
            (k) =>
              k.status === 'active' && k.balance > 0 && defaultFixture.groups[k.group]!.protocols.includes(protocol),
          )!.key;
          // The model comes from the key's own list, read by the one parser.
          const list = parseModelList(
            await (await fetch(`${sim.baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } })).text(),
          );
          const model = list.ok && list.models.find((m) => modelProtocols(m)?.includes(protocol));
          expect(model, 'a model listing the protocol').toBeTruthy();
          const headers: Record<string, string> = {
            'content-type': 'application/json',
            authorization: `Bearer ${key}`,
          };
          if (protocol === 'messages') headers['anthropic-version'] = ANTHROPIC_VERSION;
          const res = await fetch(sim.url + PROTOCOL_TABLE[protocol].path, {
            method: 'POST',
            headers,
            body: JSON.stringify(
              minimalRequest(protocol, (model as ModelEntry).id, { stream, prompt: 'Reply with one short sentence.' }),
            ),
          });
          const text = await res.text();
          expect(res.status, text).toBe(200);
          expect(res.headers.get('content-type')).toContain(stream ? 'text/event-stream' : 'application/json');
          if (stream)
            expect(text).toMatch(
              protocol === 'chat'
                ? /data: \[DONE\]/
                : protocol === 'responses'
                  ? /response\.completed/
                  : /message_stop/,
            );
        });
      }
    }
  });
});

describe('protocol knowledge: one module per protocol', () => {
  const ROOT = join(__dirname, '..', '..');

  /** Every TypeScript source of the proxy and the extension, relative to the root. */
  function sources(): string[] {
    // cli/ and language-server/ too (issue 32): a copy of a protocol path planted there used to pass.
    return SOURCE_FOLDERS.flatMap((dir) =>
      (readdirSync(join(ROOT, dir), { recursive: true }) as string[])
        .filter((f) => f.endsWith('.ts'))
        .map((f) => `${dir}/${f.split(sep).join('/')}`),
    );
  }

  // What only a protocol module may spell out. Prose that names a path inside a
  // sentence (hints, help text, error messages) is not a decision and passes.
  // The paths come from the table (each protocol's endpoint, and /models): a new protocol is guarded without an edit here.
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const TAILS = [...PROTOCOLS.map((p) => PROTOCOL_TABLE[p].endpoint), modelsList.endpoint].map((e) => esc(e.slice(1)));
  const PLAIN = TAILS.map((t) => t.replaceAll('/', '\\/')).join('|');
  const IN_REGEX = TAILS.map((t) => t.replaceAll('/', '\\\\\\/')).join('|');
  const FORBIDDEN: Array<[string, RegExp]> = [
    ['a protocol path as a string', new RegExp(`(['"\`])\\/v1\\/(${PLAIN})(\\/[^'"\`\\s]*)?\\1`)],
    ['a protocol path appended in a template', new RegExp(`\\$\\{[^}]*\\}\\/v1\\/(${PLAIN})\\b`)],
    ['a protocol path in a regular expression', new RegExp(`\\\\\\/(v1\\\\\\/)?(${IN_REGEX})(\\(|\\\\\\/|\\$)`)],
    [
      'a stream event or text part name',
      /(['"`])[^'"`\n]*(output_text|response\.(completed|incomplete|failed)|message_stop|\[DONE\])[^'"`\n]*\1/,
    ],
    [
      'a usage field name',
      /(?<![\w])(?<!max_)(prompt_tokens|completion_tokens|input_tokens|output_tokens|cache_read_input_tokens|cache_creation_input_tokens)\b/,
    ],
  ];

  // Allowed outside the modules, and why:
  // - rules/protocols/ is where they live (protocols.ts re-exports it);
  // - the simulator writes usage objects the proxy never writes: chat's with
  //   optional reasoning details, Messages' in the real API's key order
  //   (message_start's cache fields before output_tokens, message_delta's
  //   output_tokens alone), and count_tokens' {input_tokens}. It must keep
  //   answering what the real service answers (seed-spec.md), so these stay
  //   its own; its paths, events and text parts come from the modules;
  // - rules/sessions/pricing.ts calls @pydantic/genai-prices, whose usage object happens
  //   to use the same words (its input_tokens is the whole prompt, no protocol's).
  const ALLOWED: Record<string, readonly string[]> = {
    'rules/sessions/pricing.ts': ['a usage field name'],
    'simulator/chat-endpoint.ts': ['a usage field name'],
    'simulator/messages-endpoint.ts': ['a usage field name'],
    'simulator/sim-server.ts': ['a usage field name'],
  };

  function isModule(file: string): boolean {
    return file.startsWith('rules/protocols/');
  }

  function findings(file: string, text: string): string[] {
    const out: string[] = [];
    text.split('\n').forEach((line, i) => {
      const t = line.trim();
      if (t.startsWith('//') || t.startsWith('*') || t.startsWith('/*')) return;
      for (const [what, re] of FORBIDDEN)
        if (re.test(line) && !ALLOWED[file]?.includes(what)) out.push(`${file}:${i + 1}: ${what}: ${t}`);
    });
    return out;
  }

  it('no source outside rules/protocols/ spells out a protocol path, event, text part or usage field', () => {
    const files = sources().filter((f) => !isModule(f));
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => findings(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(found, 'use the protocol modules in rules/protocols/ (or allow-list it here with the reason)').toEqual([]);
  });

  it('the guard sees each kind of copy it is meant to catch (a guard that cannot fail is a defect)', () => {
    const planted = [
      "if (path === '/v1/responses') return 'responses';",
      'const url = `${base}/v1/models`;',
      'const anthropic = /\\/messages(\\/|$)/.test(path);',
      "if (type === 'response.completed') done = true;",
      "if (data === '[DONE]') break;",
      "parts.push({ type: 'output_text', text });",
      'const input = usage.prompt_tokens;',
    ];
    for (const line of planted) expect(findings('proxy/pipeline/x.ts', line), line).toHaveLength(1);
    // Prose, comments and request caps pass.
    for (const line of [
      "hint: 'Claude Code appends /v1/messages itself'",
      '// the stream ends with [DONE]',
      "max_output_tokens: 'max_tokens',",
    ]) {
      expect(findings('proxy/pipeline/x.ts', line), line).toEqual([]);
    }
    // The allow-list is per file and per kind.
    expect(findings('simulator/chat-endpoint.ts', 'prompt_tokens: n,')).toEqual([]);
    expect(findings('simulator/chat-endpoint.ts', "events.push('[DONE]');")).toHaveLength(1);
  });

  it('one function says which protocol a path is: family for routing and envelopes, exact endpoint for conversations and the bridge', () => {
    expect(pathProtocol('/v1/chat/completions')).toEqual({ protocol: 'chat', exact: true });
    expect(pathProtocol('/v1/responses?x=1')).toEqual({ protocol: 'responses', exact: true });
    expect(pathProtocol('/v1/responses/resp_1')).toEqual({ protocol: 'responses', exact: false });
    expect(pathProtocol('/v1/messages/count_tokens')).toEqual({ protocol: 'messages', exact: false });
    expect(pathProtocol('/v1/chat/completions/x')).toBeUndefined();
    expect(pathProtocol('/v1/messagesx')).toBeUndefined();
    expect(pathProtocol('/v1/models')).toBeUndefined();
    expect(bridgeKindForPath('/v1/responses/resp_1')).toBeUndefined();
    expect(envelopeFor('/v1/messages/count_tokens')).toBe('anthropic');
    expect(envelopeFor('/v1/responses')).toBe('openai');
    // Before the path is canonical (early refusals), any /messages segment answers in Anthropic's envelope.
    expect(envelopeForTarget('/v1/v1/messages?beta=true')).toBe('anthropic');
    expect(envelopeForTarget('/v1/chat/completions')).toBe('openai');
    // What the client spoke when the bridge served it: read from the label the bridge writes.
    expect(bridgedFrom(bridgeLabel('messages'))).toBe('messages');
    expect(bridgedFrom(bridgeLabel('responses'))).toBe('responses');
    expect([bridgedFrom(undefined), bridgedFrom('toString->chat'), bridgedFrom('responses')]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("each protocol's text is read by its module (the Model Explorer's Try and the simulator agree)", () => {
    expect(outputText('chat', { choices: [{ message: { content: 'hi' } }] })).toBe('hi');
    expect(
      outputText('responses', {
        output: [
          { content: [{ type: 'output_text', text: 'a' }, { type: 'refusal' }, { type: 'output_text', text: 'b' }] },
        ],
      }),
    ).toBe('ab');
    expect(outputText('responses', { output_text: 'sdk', output: [] })).toBe('sdk');
    expect(
      outputText('messages', {
        content: [{ type: 'text', text: 'x' }, { type: 'tool_use' }, { type: 'text', text: 'y' }],
      }),
    ).toBe('xy');
    expect(outputText('chat', undefined)).toBe('');
  });
});

// Issue 32: protocols with behaviour. What differs by protocol is asked of its
// module (PROTOCOL_TABLE[p].outputText, .usage, .conversation, …) or of a
// Record<Protocol, …> the compiler checks, never decided by comparing a
// protocol's name, so a new protocol cannot quietly get another's behaviour.
describe('protocol behaviour: asked of the module, never a comparison on its name', () => {
  const ROOT = join(__dirname, '..', '..');
  const NAMES = PROTOCOLS.map((p) => esc(p)).join('|');
  /** A protocol name in any quotes (no back-reference: the pattern below repeats it). */
  const Q = `(?:'(?:${NAMES})'|"(?:${NAMES})"|\`(?:${NAMES})\`)`;
  function esc(t: string): string {
    return t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }

  /** `x === 'chat'`, `'chat' !== x`, `case 'chat':`, `.includes('chat')`. */
  const COMPARISON = new RegExp(
    `[!=]==?\\s*${Q}|${Q}\\s*[!=]==?|\\bcase\\s+${Q}\\s*:|\\.(?:includes|indexOf)\\(\\s*${Q}\\s*\\)`,
  );

  /** Where protocol names may be compared: the modules themselves, and the simulator (it plays the service). */
  function exempt(file: string): boolean {
    return file.startsWith('rules/protocols/') || file.startsWith('simulator/');
  }

  function comparisons(file: string, text: string): string[] {
    const out: string[] = [];
    text.split('\n').forEach((line, i) => {
      const t = line.trim();
      if (t.startsWith('//') || t.startsWith('*') || t.startsWith('/*')) return;
      if (COMPARISON.test(line)) out.push(`${file}:${i + 1}: ${t}`);
    });
    return out;
  }

  function sources(): string[] {
    return SOURCE_FOLDERS.flatMap((dir) =>
      (readdirSync(join(ROOT, dir), { recursive: true }) as string[])
        .filter((f) => f.endsWith('.ts'))
        .map((f) => `${dir}/${f.split(sep).join('/')}`),
    );
  }

  it('no source outside the protocol modules and the simulator compares a protocol name', () => {
    const files = sources().filter((f) => !exempt(f));
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => comparisons(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(found, 'ask the protocol module (rules/protocols/) or key a Record<Protocol, …> on it').toEqual([]);
  });

  it('the scan catches each form of comparison (a guard that cannot fail is a defect)', () => {
    const planted = [
      "if (protocol === 'messages') headers['anthropic-version'] = v;",
      'return kind === "responses" ? a : b;',
      "if ('chat' !== p) return;",
      'switch (p) { case `responses`: return 1; }',
      "if (protocols?.includes('messages')) return 'messages';",
    ];
    for (const line of planted) expect(comparisons('proxy/pipeline/x.ts', line), line).toHaveLength(1);
    // A name that is data (a table row, an argument) is no comparison; the modules may compare.
    for (const line of [
      "bridgeRule('responses', key)",
      "const t: Record<Protocol, string> = { chat: 'a', responses: 'b', messages: 'c' };",
      "if (role === 'messagesx') x();",
    ]) {
      expect(comparisons('proxy/pipeline/x.ts', line), line).toEqual([]);
    }
    expect(exempt('rules/protocols/index.ts') && exempt('simulator/check.ts')).toBe(true);
    expect(exempt('rules/wire/conversation.ts')).toBe(false);
  });

  it('the table is a Record<Protocol, ProtocolModule>: a missing row or a module without a behaviour does not compile', () => {
    // @ts-expect-error: a protocol without its row
    const missing: Record<Protocol, ProtocolModule> = {
      chat: PROTOCOL_TABLE.chat,
      responses: PROTOCOL_TABLE.responses,
    };
    // @ts-expect-error: a module that cannot read its usage
    const partial: ProtocolModule = { ...PROTOCOL_TABLE.chat, usage: undefined };
    expect([missing, partial]).toHaveLength(2);
    // The first-use order is each module's `firstUse`, so it holds every protocol (a list beside the table could miss one).
    expect(PROTOCOL_ORDER).toEqual(['responses', 'chat', 'messages']);
    expect([...PROTOCOL_ORDER].sort()).toEqual([...PROTOCOLS].sort());
    for (const p of PROTOCOLS) {
      const m = PROTOCOL_TABLE[p];
      expect(m.protocol).toBe(p);
      for (const f of [
        m.minimalRequest,
        m.outputText,
        m.streamCompleted,
        m.usage,
        m.conversation.request,
        m.conversation.response,
        m.conversation.stream,
      ])
        expect(typeof f).toBe('function');
    }
  });

  it("each module's own answer: the text and the completion of its stream, not Messages' for all", () => {
    expect(streamCompleted('chat', 'data: {}\n\ndata: [DONE]\n\n')).toBe(true);
    expect(streamCompleted('chat', 'event: message_stop\ndata: {}\n\n')).toBe(false);
    expect(streamCompleted('responses', 'event: message_stop\ndata: {}\n\n')).toBe(false);
    expect(streamCompleted('messages', 'event: message_stop\ndata: {}\n\n')).toBe(true);
    expect(outputText('responses', { content: [{ type: 'text', text: 'a Messages body' }] })).toBe('');
    expect(minimalFields('responses')).toEqual(['model', 'input', 'stream']);
  });

  // The usage fields of each protocol as DESIGN.md §10 lists them.
  it('usage(body): one set of terms for every protocol (input counts cache reads and writes)', () => {
    expect(
      answerUsage('chat', {
        usage: {
          prompt_tokens: 120,
          completion_tokens: 30,
          total_tokens: 150,
          prompt_tokens_details: { cached_tokens: 100 },
          completion_tokens_details: { reasoning_tokens: 12 },
        },
      }),
    ).toEqual({ input: 120, output: 30, cacheRead: 100, reasoning: 12, total: 150 });
    expect(
      answerUsage('responses', {
        usage: {
          input_tokens: 80,
          input_tokens_details: { cached_tokens: 64 },
          output_tokens: 20,
          output_tokens_details: { reasoning_tokens: 5 },
          total_tokens: 100,
        },
      }),
    ).toEqual({ input: 80, output: 20, cacheRead: 64, reasoning: 5, total: 100 });
    // Anthropic's input_tokens is the uncached rest: the context is the three input counts summed.
    expect(
      answerUsage('messages', {
        usage: { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 1000, output_tokens: 40 },
      }),
    ).toEqual({
      input: 1210,
      output: 40,
      cacheRead: 1000,
      cacheWrite: 200,
      total: 1250,
    });
    // Absent is absent, not 0; no usage object is undefined.
    expect(answerUsage('chat', { usage: { prompt_tokens: 5 } })).toEqual({ input: 5 });
    expect(PROTOCOLS.map((p) => answerUsage(p, { id: 'x' }))).toEqual(PROTOCOLS.map(() => undefined));
  });

  describe('usage(body) reads what the simulator answers', () => {
    const sim = sharedForAll(() => startSimulator({ port: 0 }));

    for (const protocol of PROTOCOLS) {
      it(protocol, async () => {
        const key = defaultFixture.keys.find(
          (k) => k.status === 'active' && k.balance > 0 && defaultFixture.groups[k.group]!.protocols.includes(protocol),
        )!.key;
        const list = parseModelList(
          await (await fetch(`${sim.baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } })).text(),
        );
        const model = list.ok && list.models.find((m) => modelProtocols(m)?.includes(protocol));
        const res = await fetch(sim.url + PROTOCOL_TABLE[protocol].path, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${key}`,
            ...PROTOCOL_TABLE[protocol].clientHeaders,
          },
          body: JSON.stringify(
            minimalRequest(protocol, (model as ModelEntry).id, {
              stream: false,
              prompt: 'Reply with one short sentence.',
            }),
          ),
        });
        const body = await res.json();
        expect(res.status).toBe(200);
        const usage = answerUsage(protocol, body)!;
        expect(usage.input).toBeGreaterThan(0);
        expect(usage.output).toBeGreaterThan(0);
        expect(usage.total).toBe(usage.input! + usage.output!);
        expect(outputText(protocol, body).length).toBeGreaterThan(0);
        // The conversation reader sees the same answer.
        const [message] = PROTOCOL_TABLE[protocol].conversation.response(body as Record<string, unknown>);
        expect(
          message!.parts
            .filter((p) => p.type === 'text')
            .map((p) => p.content)
            .join(''),
        ).toBe(outputText(protocol, body));
      });
    }
  });
});

describe("the proxy's own API: one contract (issue 32)", () => {
  const ROOT = join(__dirname, '..', '..');
  // Every program that could speak to it: the proxy, the CLI, the language server and the extension.
  const FOLDERS = SOURCE_FOLDERS;
  /** Where its paths are spelled: the contract alone (the servers and the client take them from it). */
  const CONTRACT = 'core/local-api.ts';

  function sources(): string[] {
    return FOLDERS.flatMap((dir) =>
      (readdirSync(join(ROOT, dir), { recursive: true }) as string[])
        .filter((f) => f.endsWith('.ts'))
        .map((f) => `${dir}/${f.split(sep).join('/')}`),
    );
  }

  /** Lines outside comments that spell a /_loopgate/ path (in a string, a template or a regular expression). */
  function localPaths(file: string, text: string): string[] {
    if (file === CONTRACT) return [];
    return text.split('\n').flatMap((line, i) => {
      const t = line.trim();
      if (t.startsWith('//') || t.startsWith('*') || t.startsWith('/*')) return [];
      return /\/_loopgate(\/|\\\/|\b)/.test(line.replace(/\/\/.*$/, '')) ? [`${file}:${i + 1}: ${t}`] : [];
    });
  }

  it('no source but core/local-api.ts spells a /_loopgate/ path', () => {
    const files = sources();
    expect(files).toEqual(
      expect.arrayContaining(['cli/tail.ts', 'language-server/main.ts', 'extension/traffic/traffic-list.ts', CONTRACT]),
    );
    const found = files.flatMap((f) => localPaths(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(
      found,
      'take the path from LOCAL_PATHS (core/local-api.ts) and read it with client/local-api-client.ts',
    ).toEqual([]);
  });

  it('the guard sees each kind of copy, in every folder (a guard that cannot fail is a defect)', () => {
    const planted = [
      "const url = new URL('/_loopgate/stats', proxyUrl);",
      'await fetch(`${url}/_loopgate/traffic?rows=1`);',
      '`(HTTP ${status} on /_loopgate/health)`',
      'if (/^\\/_loopgate\\//.test(path)) return;',
    ];
    for (const file of ['cli/x.ts', 'language-server/x.ts', 'extension/x.ts', 'proxy/pipeline/x.ts']) {
      for (const line of planted) expect(localPaths(file, line), `${file}: ${line}`).toHaveLength(1);
    }
    // Comments pass; the contract itself passes.
    expect(localPaths('cli/x.ts', '// reads /_loopgate/stats')).toEqual([]);
    expect(localPaths(CONTRACT, "stats: '/_loopgate/stats',")).toEqual([]);
  });
});
