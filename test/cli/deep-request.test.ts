// Issue 39 H-1, as it was found: the built CLI's `serve` in a child process, in front of an upstream that
// streams one answer slowly. While another client's stream is open, a POST /v1/chat/completions naming no
// session whose first message nests 20,000 arrays (about 40 KB) goes through: the proxy stays up, the open
// stream ends whole, the request is logged, and the next request is answered.
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { exited, spawnCli, tempHome } from './io.js';
import type { TrafficRecord } from '../../core/record.js';

const TOKEN = 'lg-local-deep-cli-0123456789abcdefghijklmno';
const KEY = 'sk-deep-test-0123456789abcdefghijklmnopqrst';

function chunk(content: string, finish: string | null = null): string {
  const c = {
    id: 'c1',
    object: 'chat.completion.chunk',
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(c)}\n\n`;
}

describe('serve: one deeply nested request (issue 39 H-1)', () => {
  it('does not end the proxy, cut another stream or lose its record', async () => {
    let held: ServerResponse | undefined;
    let streamOpen!: () => void;
    const opened = new Promise<void>((r) => (streamOpen = r));
    const upstream = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        if (req.url === '/v1/models') {
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] }));
        }
        if (Buffer.concat(parts).toString().includes('"stream":true')) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(chunk('first '));
          held = res;
          return streamOpen();
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c2',
            object: 'chat.completion',
            model: 'gpt-4o-mini',
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          }),
        );
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const logFile = join(mkdtempSync(join(tmpdir(), 'lg-deep-')), 'traffic.jsonl');
    const site = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const s = await spawnCli(
      ['serve', '--port', '0', '--upstream', site, '--allow-http', '--log', logFile],
      { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN, LOOPGATE_API_KEY: KEY },
      /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    );
    const url = s.match[1]!;
    try {
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: TOKEN, maxRetries: 0 });
      // Another client's stream, open while the deep request goes through.
      const stream = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'long' }],
      });
      const reading = (async () => {
        let text = '';
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
        return text;
      })();
      await opened;

      const deep = `${'['.repeat(20_000)}"hi"${']'.repeat(20_000)}`;
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${deep}}]}`,
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      // Its record is logged (the log is written after the response's close handler ran through).
      const deadline = Date.now() + 10_000;
      let records: TrafficRecord[] = [];
      while (!records.some((r) => r.bytesIn > 40_000)) {
        if (Date.now() > deadline)
          throw new Error(`no record of the deep request; proxy exit code ${s.child.exitCode}:\n${s.lines.join('\n')}`);
        await new Promise((r) => setTimeout(r, 20));
        try {
          const text = readFileSync(logFile, 'utf8');
          records = text
            .slice(0, text.lastIndexOf('\n') + 1)
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as TrafficRecord);
        } catch {
          // not written yet
        }
      }
      const rec = records.find((r) => r.bytesIn > 40_000)!;
      expect(rec.status).toBe(200);
      // Too deep to hash its opening: a session of its own; nothing failed.
      expect(rec.session?.id).toBeTruthy();
      expect(rec.sinkErrors).toBeUndefined();
      expect(s.child.exitCode).toBeNull();

      // The open stream ends whole.
      held!.end(chunk('and last', 'stop') + 'data: [DONE]\n\n');
      expect(await reading).toBe('first and last');
      // The next request is answered.
      const next = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'next' }],
      });
      expect(next.choices[0]?.message.content).toBe('ok');
      expect(s.lines.join('\n')).not.toContain(KEY);
    } finally {
      s.child.kill('SIGTERM');
      await exited(s.child);
      held?.destroy();
      await new Promise((r) => upstream.close(r));
    }
  });
});
