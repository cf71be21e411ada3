// The clients of test/proxy/request-budget.test.ts, run in a child process so
// that the test's process (which holds the proxy) counts only the proxy's own
// JSON.parse, JSON.stringify, Buffer#toString and hashing: the SDKs' work on
// their side of the socket happens here. One kind of request, `count` times in
// a row; prints {"done":count} and exits 0, or the first error and exits 1.
//   node request-budget-client.mjs '{"kind":"chat","stream":false,"url":…,"token":…,"count":100,"chunks":4,"system":"…"}'
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import WebSocket from 'ws';

const job = JSON.parse(process.argv[2]);
const headers = { 'x-sim-chunks': String(job.chunks) };
const openai = () =>
  new OpenAI({ baseURL: `${job.url}/v1`, apiKey: job.token, maxRetries: 0, defaultHeaders: headers });
const anthropic = () => new Anthropic({ baseURL: job.url, apiKey: job.token, maxRetries: 0, defaultHeaders: headers });

/** Reads a stream to its end: the proxy's work on every chunk is what a stream row measures. */
async function drain(stream) {
  let events = 0;
  for await (const _ of stream) events++;
  if (events === 0) throw new Error('the stream carried no events');
}

async function chat(client, i) {
  const body = {
    model: job.model,
    messages: [
      { role: 'system', content: job.system },
      { role: 'user', content: `question ${i}` },
    ],
  };
  if (job.stream) await drain(await client.chat.completions.create({ ...body, stream: true }));
  else await client.chat.completions.create(body);
}

async function responses(client, i) {
  const body = { model: job.model, instructions: job.system, input: `question ${i}` };
  if (job.stream) await drain(await client.responses.create({ ...body, stream: true }));
  else await client.responses.create(body);
}

async function messages(client, i) {
  const body = {
    model: job.model,
    max_tokens: 64,
    system: job.system,
    messages: [{ role: 'user', content: `question ${i}` }],
  };
  if (job.stream) await drain(await client.messages.create({ ...body, stream: true }));
  else await client.messages.create(body);
}

/** Codex's transport: one connection, `count` response.create turns on it, each read to response.completed. */
async function websocket() {
  const ws = new WebSocket(`${job.url.replace(/^http/, 'ws')}/v1/responses`, {
    headers: { authorization: `Bearer ${job.token}`, ...headers },
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  for (let i = 0; i < job.count; i++) {
    const completed = new Promise((resolve, reject) => {
      const onMessage = (data) => {
        const event = JSON.parse(data.toString());
        if (event.type === 'error') reject(new Error(JSON.stringify(event)));
        if (event.type === 'response.completed') {
          ws.off('message', onMessage);
          resolve();
        }
      };
      ws.on('message', onMessage);
    });
    ws.send(
      JSON.stringify({
        type: 'response.create',
        model: job.model,
        instructions: job.system,
        input: `question ${i}`,
        stream: true,
      }),
    );
    await completed;
  }
  await new Promise((resolve) => {
    ws.once('close', resolve);
    ws.close(1000);
  });
}

const send = { chat, responses, messages }[job.kind];
try {
  if (job.kind === 'websocket') await websocket();
  else {
    const client = job.kind === 'messages' ? anthropic() : openai();
    for (let i = 0; i < job.count; i++) await send(client, i);
  }
  process.stdout.write(JSON.stringify({ done: job.count }) + '\n');
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String(err?.stack ?? err) }) + '\n');
  process.exitCode = 1;
}
