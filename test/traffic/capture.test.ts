// The live traffic ring through a real proxy in front of the simulator, driven
// by the official SDKs: what lands in it, what it shows (the conversation
// reassembled, tool calls paired with their results, stream event times), what
// stays out of it, its limits, and the live feed.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startStack, threeGroupKeys, TOKEN, until, untilAsync, type Stack } from '../proxy/stack.js';
import type { FollowUp } from '../../core/traffic-entry.js';
import { conversationOf } from '../../rules/wire/follow-ups.js';
import { type TrafficEntry } from '../../core/traffic-entry.js';
import { sharedForAll } from '../kit/lifecycle.js';

type Detailed = TrafficEntry & { followUps: Record<string, FollowUp> };

async function get<T>(s: Stack, path: string, token = TOKEN): Promise<{ status: number; body: T }> {
  const res = await request(s.proxy.url + path, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.statusCode, body: (await res.body.json()) as T };
}

const weather = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('the traffic ring', () => {
  const s = sharedForAll(() =>
    startStack({
      key: undefined,
      keys: threeGroupKeys(),
    }),
  );

  const entryOf = (id: string) =>
    untilAsync(
      async () => {
        const r = await get<Detailed>(s, `/_loopgate/traffic/${id}`);
        return r.status === 200 ? r.body : undefined;
      },
      5000,
      `entry ${id}`,
    );

  it('holds an Anthropic stream with a tool call, reassembled, and pairs the call with the result the next request sent', async () => {
    const client = s.anthropic();
    const first = client.messages.stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 200,
      tools: [weather],
      messages: [{ role: 'user', content: 'use get_weather for Paris' }],
    });
    const message = await first.finalMessage();
    const firstId = (await first.withResponse()).response.headers.get('x-loopgate-request-id')!;
    const call = message.content.find((b) => b.type === 'tool_use')!;
    expect(call).toBeDefined();
    const second = await client.messages
      .create({
        model: 'claude-sonnet-4-6',
        max_tokens: 200,
        tools: [weather],
        messages: [
          { role: 'user', content: 'use get_weather for Paris' },
          { role: 'assistant', content: message.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'sunny, 21 C' }] },
        ],
      })
      .withResponse();
    const secondId = second.response.headers.get('x-loopgate-request-id')!;

    const entry = await entryOf(firstId);
    expect(entry.record).toMatchObject({
      method: 'POST',
      canonicalPath: '/v1/messages',
      status: 200,
      stream: true,
      key: 'claude',
      model: 'claude-sonnet-4-6',
    });
    const conv = conversationOf(entry);
    expect(conv.requestProtocol).toBe('messages');
    expect(conv.input[0]!.parts[0]).toMatchObject({ type: 'text', content: 'use get_weather for Paris' });
    const toolCall = conv.output![0]!.parts.find((p) => p.type === 'tool_call')!;
    expect(toolCall).toMatchObject({ name: 'get_weather', id: call.id });
    expect(JSON.parse(toolCall.arguments as string)).toEqual(call.input);
    expect(conv.output![0]!.finish_reason).toBe('tool_use');
    // Each event of the stream, with the time it arrived (ms since the request started, in order).
    const events = entry.responseBody!.split(/\r?\n\r?\n/).filter((e) => e.trim());
    expect(entry.eventTimes).toHaveLength(events.length);
    expect(entry.eventTimes!.every((t, i, a) => t >= 0 && (i === 0 || t >= a[i - 1]!))).toBe(true);
    // The result came back in the second request.
    expect(entry.followUps[call.id]).toMatchObject({
      id: secondId,
      result: { type: 'tool_call_response', response: 'sunny, 21 C' },
    });
  });

  it('holds a bridged Responses request on the chat-only key: the client side in Responses, the answer as the chat route wrote it', async () => {
    const { data, response } = await s
      .openai()
      .responses.create({ model: 'deepseek-reasoner', input: 'hello bridge' })
      .withResponse();
    const entry = await entryOf(response.headers.get('x-loopgate-request-id')!);
    expect(entry.record).toMatchObject({
      key: 'chat-only',
      bridge: 'responses->chat',
      canonicalPath: '/v1/chat/completions',
    });
    const conv = conversationOf(entry);
    expect(conv).toMatchObject({ requestProtocol: 'responses', responseProtocol: 'chat' });
    const answer = conv.output![0]!.parts.find((p) => p.type === 'text')!;
    expect(answer.content).toBe(data.output_text);
    // The reasoner's thinking is there, apart from the answer.
    expect(conv.output![0]!.parts[0]!.type).toBe('reasoning');
  });

  it('holds a refused request with its diagnosis', async () => {
    const err = await s
      .openai(undefined, 'lg-local-wrong-token-000000000000')
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
      .then(
        () => ({ status: 200 }),
        (e: unknown) => e as { status: number },
      );
    expect(err.status).toBe(401);
    const list = await get<{ entries: Array<{ record: { status: number; diagnosis?: string } }> }>(
      s,
      '/_loopgate/traffic?limit=1',
    );
    expect(list.body.entries[0]!.record).toMatchObject({ status: 401, diagnosis: 'wrong-local-token' });
  });

  it("keeps Loopgate's own endpoints and connectivity probes out", async () => {
    const before = (await get<{ capture: { entries: number } }>(s, '/_loopgate/traffic')).body.capture.entries;
    await get(s, '/_loopgate/health');
    await get(s, '/_loopgate/stats');
    await request(s.proxy.url + '/', { method: 'HEAD' }).then((r) => r.body.dump());
    const after = (await get<{ capture: { entries: number } }>(s, '/_loopgate/traffic')).body.capture.entries;
    expect(after).toBe(before);
  });

  it('is behind the local token', async () => {
    const res = await request(s.proxy.url + '/_loopgate/traffic');
    expect(res.statusCode).toBe(401);
    await res.body.dump();
    const wrong = await get(s, '/_loopgate/traffic/live', 'lg-local-wrong-token-000000000000');
    expect(wrong.status).toBe(401);
  });

  it('says when a request is not (or no longer) held', async () => {
    const r = await get<{ error: { code: string; message: string } }>(
      s,
      '/_loopgate/traffic/00000000-0000-4000-8000-000000000000',
    );
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('unknown-request');
    expect(r.body.error.message).toMatch(/keeps the last 500 requests/);
  });

  it('feeds new entries to a live subscriber as they finish', async () => {
    const controller = new AbortController();
    const res = await request(s.proxy.url + '/_loopgate/traffic/live', {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: controller.signal,
    });
    expect(res.headers['content-type']).toMatch(/text\/event-stream/);
    const seen: string[] = [];
    const reading = (async () => {
      let buf = '';
      for await (const chunk of res.body) {
        buf += chunk.toString();
        for (const m of buf.matchAll(/^data: (.*)$/gm))
          seen.push((JSON.parse(m[1]!) as { record: { model: string } }).record.model);
        buf = buf.slice(buf.lastIndexOf('\n') + 1);
      }
    })().catch(() => undefined);
    await until(() => (s.proxy.traffic!.subscribers > 0 ? true : undefined));
    await s.openai().chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'live' }] });
    await until(() => (seen.includes('gpt-4.1') ? true : undefined), 5000, 'the live entry');
    controller.abort();
    await reading;
    await until(() => (s.proxy.traffic!.subscribers === 0 ? true : undefined), 5000, 'the subscriber to leave');
  });
});

describe('what the ring keeps out', () => {
  it("a web page's refused requests (they cannot flood it), and a second copy of the bodies with --log-bodies", async () => {
    const s = await startStack({ logBodies: true });
    try {
      const page = await request(s.proxy.url + '/v1/chat/completions', {
        method: 'POST',
        headers: {
          origin: 'https://evil.example',
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
        },
        body: '{}',
      });
      expect(page.statusCode).toBe(403);
      await page.body.dump();
      await s
        .openai()
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'kept once' }] });
      const list = await get<{ entries: Array<{ record: Record<string, unknown> }> }>(s, '/_loopgate/traffic');
      expect(list.body.entries).toHaveLength(1);
      expect(list.body.entries[0]!.record.requestBody).toBeUndefined();
      expect(list.body.entries[0]!.record.responseBody).toBeUndefined();
      const entry = s.proxy.traffic!.list()[0]!;
      expect(entry.requestBody).toContain('kept once');
    } finally {
      await s.close();
    }
  });
});

describe('the ring limits and --no-capture', () => {
  it('drops the oldest requests beyond its count', async () => {
    const s = await startStack({ capture: { entries: 3 } });
    try {
      for (let i = 0; i < 5; i++)
        await s
          .openai()
          .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `n${i}` }] });
      const list = await get<{ capture: { entries: number; evicted: number }; entries: unknown[] }>(
        s,
        '/_loopgate/traffic',
      );
      expect(list.body.capture).toMatchObject({ entries: 3, evicted: 2 });
      expect(list.body.entries).toHaveLength(3);
    } finally {
      await s.close();
    }
  });

  it('with capture off, keeps nothing and says so', async () => {
    const s = await startStack({ capture: false });
    try {
      await s.openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
      const r = await get<{ error: { code: string; message: string } }>(s, '/_loopgate/traffic');
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ code: 'capture-off' });
      expect(r.body.error.message).toMatch(/--no-capture/);
      expect(s.proxy.traffic).toBeUndefined();
    } finally {
      await s.close();
    }
  });
});
