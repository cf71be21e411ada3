// The traffic ring keeps bodies as the captured bytes and redacts them when read
// (proxy/traffic/ring-entry.ts): a key the proxy learns AFTER a request was made
// (the user changes it in the editor) is masked when that request's body is read
// back, through every reader: the entry endpoint, the filter (?q=, which must not
// tell what a masked secret was) and `loopgate show`.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertNoCanary, makeCanary } from '../log/canary.js';
import { startStack, TOKEN, until, type Stack } from '../proxy/stack.js';
import { runCli } from '../cli/io.js';

let s: Stack;
// Not shaped like any provider's key: nothing masks it until it is registered.
const later = makeCanary('later-');

beforeAll(async () => {
  s = await startStack();
});
afterAll(() => s.close());

async function get(path: string): Promise<string> {
  const res = await request(s.proxy.url + path, { headers: { authorization: `Bearer ${TOKEN}` } });
  return res.body.text();
}

describe('ring bodies are redacted when read', () => {
  it('masks a key added after the request in every reader of the body', async () => {
    await s.openai().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: `please keep ${later} for later` }],
    });
    const entry = await until(() => s.proxy.traffic!.list({ limit: 1 })[0]);
    // Unknown when it passed: the body shows it as sent (and the read is remembered).
    expect(await get(`/_loopgate/traffic/${entry.record.id}`)).toContain(later);

    // The user switches to this key in the editor: from now on it is a secret.
    s.proxy.setKey(later);

    // What the proxy's own readers get in process (the recorder, Save as Fixture, the session book's turns).
    const kept = s.proxy.traffic!.get(entry.record.id)!;
    assertNoCanary(JSON.stringify(kept) + kept.requestBody, [later]);
    const detail = await get(`/_loopgate/traffic/${entry.record.id}`);
    assertNoCanary(detail, [later]);
    expect((JSON.parse(detail) as { requestBody: string }).requestBody).toContain('for later');
    // The filter searches redacted text: the secret's text finds nothing.
    const found = JSON.parse(await get(`/_loopgate/traffic?q=${encodeURIComponent(later)}`)) as {
      entries: unknown[];
    };
    expect(found.entries).toEqual([]);
    const plain = JSON.parse(await get(`/_loopgate/traffic?q=${encodeURIComponent('keep [REDACTED')}`)) as {
      entries: Array<{ seq: number }>;
    };
    expect(plain.entries.map((e) => e.seq)).toEqual([entry.seq]);
    const port = String(new URL(s.proxy.url).port);
    for (const extra of [[], ['--json'], ['--wire']]) {
      const r = await runCli(['show', entry.record.id, '--port', port, ...extra], { LOOPGATE_TOKEN: TOKEN });
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain('for later');
      assertNoCanary(r.out + r.err, [later]);
    }
  });
});
