// Canary sweep of the traffic ring's sinks: the real key, the local token and a
// provider-shaped key planted in request bodies, tool arguments, headers, the
// query, answers that echo them (JSON and streamed, native and bridged) never
// appear in what the ring serves (list, entries, live feed) nor in what
// `tail`, `show` (overview, wire, JSON) and `show --curl` print.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertNoCanary, makeCanary } from '../log/canary.js';
import { KEYS, startStack, threeGroupKeys, TOKEN, until, type Stack } from '../proxy/stack.js';
import { runCli } from '../cli/io.js';

let s: Stack;
const planted = makeCanary('sk-proj-');
const secrets = [KEYS.default, KEYS.chatOnly, KEYS.claude, TOKEN, planted];

beforeAll(async () => {
  s = await startStack({
    key: undefined,
    keys: threeGroupKeys(),
  });
});
afterAll(() => s.close());

async function text(path: string, signal?: AbortSignal): Promise<string> {
  const res = await request(s.proxy.url + path, { headers: { authorization: `Bearer ${TOKEN}` }, signal });
  return res.body.text();
}

describe('the traffic ring never shows a secret', () => {
  it('in any sink', async () => {
    // The live feed, open while the requests run.
    const controller = new AbortController();
    const liveRes = await request(s.proxy.url + '/_loopgate/traffic/live', {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: controller.signal,
    });
    let live = '';
    const reading = (async () => {
      for await (const chunk of liveRes.body) live += chunk.toString();
    })().catch(() => undefined);
    await until(() => (s.proxy.traffic!.subscribers > 0 ? true : undefined));

    const words = `use get_weather for \`${KEYS.default}\` and ${TOKEN} and ${planted} and ${KEYS.claude}`;
    const weather = {
      name: 'get_weather',
      description: 'w',
      input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
    };
    const headers = {
      'x-custom-note': `${planted} ${KEYS.default}`,
      'x-debug': Buffer.from(KEYS.default).toString('base64'),
    };
    // Native Messages, streamed, with a tool call whose arguments carry the user's words.
    const stream = s
      .anthropic()
      .messages.stream(
        { model: 'claude-sonnet-4-6', max_tokens: 100, tools: [weather], messages: [{ role: 'user', content: words }] },
        { headers },
      );
    await stream.finalMessage();
    // Native chat (JSON), the key in the query too.
    await s
      .openai()
      .chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: words }] },
        { headers, query: { api_key: KEYS.default } },
      );
    // Bridged Responses (stream) on the chat-only key.
    const r = await s
      .openai()
      .responses.create({ model: 'deepseek-reasoner', input: words, stream: true }, { headers });
    for await (const e of r) void e;
    // A refused one, its error quoting nothing of ours.
    await s
      .openai(undefined, `lg-local-${planted}`)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: words }] })
      .catch(() => undefined);

    const list = await text('/_loopgate/traffic');
    const ids = (JSON.parse(list) as { entries: Array<{ record: { id: string } }> }).entries.map((e) => e.record.id);
    expect(ids.length).toBeGreaterThanOrEqual(4);
    const entries = await Promise.all(ids.map((id) => text(`/_loopgate/traffic/${id}`)));
    // The ring holds the conversation (masked), not nothing: the check has something to look at.
    expect(entries.join('\n')).toContain('get_weather');
    expect(entries.join('\n')).toMatch(/\[REDACTED:[0-9a-f]{4}\]/);
    await until(() => (ids.every((id) => live.includes(id)) ? true : undefined), 5000, 'the live feed');
    controller.abort();
    await reading;

    const port = String(s.proxy.port);
    const env = { LOOPGATE_TOKEN: TOKEN };
    const printed: string[] = [];
    for (const args of [
      ['tail', '--no-follow', '--lines', '50'],
      ['tail', '--no-follow', '--json'],
    ])
      printed.push((await runCli([...args, '--port', port], env)).out);
    for (const id of ids) {
      for (const flags of [['--wire'], ['--json'], ['--curl']]) {
        const out = await runCli(['show', id, ...flags, '--port', port], env);
        printed.push(out.out, out.err);
      }
    }
    expect(printed.join('\n')).toContain('get_weather');

    for (const [name, sink] of [
      ['list', list],
      ['entries', entries.join('\n')],
      ['live feed', live],
      ['tail/show output', printed.join('\n')],
    ] as const) {
      try {
        assertNoCanary(sink, secrets);
      } catch (err) {
        throw new Error(`${name}: ${(err as Error).message}`);
      }
    }
  });
});
