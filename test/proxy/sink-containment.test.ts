// finish() runs each sink contained (pipeline/build-record.ts): a sink that throws, here the
// embedder's onTraffic callback, is said once and the request's other sinks still run; the
// proxy stays up and serves the next request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logRecords, startStack, until, type Stack } from './stack.js';

let s: Stack;
let calls = 0;

beforeAll(async () => {
  s = await startStack({
    onTraffic: () => {
      calls++;
      throw new Error('the console went away');
    },
  });
});
afterAll(() => s.close());

describe('a sink that throws', () => {
  it('is said once; the log, the ring and the next request go on', async () => {
    for (let i = 0; i < 3; i++) {
      const done = await s.openai().chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: `hello ${i}` }],
      });
      expect(done.choices[0]?.message.content).toBeTruthy();
    }
    await until(() => (calls >= 3 ? true : undefined), 5000, 'three console calls');
    const said = s.hints.filter((h) => h.includes('console step failed'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('the console went away');
    await until(() => (logRecords(s.logFile).length >= 3 ? true : undefined), 5000, 'three log lines');
    expect(s.proxy.traffic!.list().length).toBeGreaterThanOrEqual(3);
  });
});
