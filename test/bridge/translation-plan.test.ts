import { describe, expect, it } from 'vitest';
import { openBridge } from '../../proxy/bridge/index.js';
import { completion, parseSse, TEXT_STREAM } from './chat-fixtures.js';

describe('openBridge', () => {
  it('packages the chat request, label and translators', () => {
    const r = openBridge('responses', { model: 'gpt-4o-mini', input: 'hi', stream: true }, { requestId: 'r1' });
    if (!r.ok) throw new Error(r.message);
    const s = r.plan;
    expect(s.label).toBe('responses->chat');
    expect(s.path).toBe('/v1/chat/completions');
    expect(s.stream).toBe(true);
    expect(JSON.parse(s.body.toString())).toMatchObject({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(parseSse(s.translator.push(TEXT_STREAM)).at(-1)!.event).toBe('response.completed');
    const ok = s.result(Buffer.from(JSON.stringify(completion({ content: 'yo' }, 'stop'))));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ object: 'response', model: 'gpt-4o-mini' });
    expect(
      JSON.parse(
        s.error(
          429,
          Buffer.from('{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limit_exceeded"}}'),
        ).body,
      ),
    ).toMatchObject({
      error: { code: 'rate_limit_exceeded' },
    });
  });

  it('a refused parameter comes back as a ready 400 body in the caller envelope', () => {
    const r = openBridge(
      'messages',
      {
        model: 'm',
        max_tokens: 5,
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
        tool_choice: { type: 'tool', name: 'web_search' },
        messages: [{ role: 'user', content: 'x' }],
      },
      { requestId: 'r2' },
    );
    if (r.ok) throw new Error('expected a refusal');
    expect(r.status).toBe(400);
    expect(r.param).toBe('tool_choice');
    expect(JSON.parse(r.body)).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining("'tool_choice'") },
    });
  });

  it('a 200 that is not a chat completion is a 502 in the caller envelope, not an empty answer', () => {
    const r = openBridge('messages', { model: 'm', messages: [{ role: 'user', content: 'x' }] }, { requestId: 'r3' });
    if (!r.ok) throw new Error(r.message);
    for (const bad of ['not json', '{"object":"list","data":[]}']) {
      const out = r.plan.result(Buffer.from(bad));
      expect(out.status).toBe(502);
      expect(JSON.parse(out.body)).toMatchObject({
        type: 'error',
        error: { type: 'api_error', message: expect.stringContaining('not a chat completion') },
      });
    }
  });
});
