// Runs inside the newest VS Code (code-server, 1.104+ API): the `loopgate`
// vendor in VS Code's own language-model API, as any `vscode.lm` consumer
// (Copilot Chat's picker, Cline, Roo Code) uses it, against the simulator the
// outer test started (loopgate.baseUrl in user settings).
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../extension/extension.js';
import fixtureJson from '../../../simulator/default-fixture.json';
import { validateFixture } from '../../../simulator/fixture.js';
import { defaultAndClaude, plainKeyOf as keyOf, proxyKeys, simOrigin, startLoopgate } from '../harness/ext/loopgate.js';
import { assert, runTests, test, waitFor } from '../harness/ext/testkit.js';

const fixture = validateFixture(fixtureJson);
const groupModels = (group: string) => fixture.groups[group]!.models.map((m) => (typeof m === 'string' ? m : m.id));

let api: LoopgateTestApi;

async function loopgateModels(): Promise<vscode.LanguageModelChat[]> {
  return vscode.lm.selectChatModels({ vendor: 'loopgate' });
}

async function model(id: string): Promise<vscode.LanguageModelChat> {
  return waitFor(async () => (await loopgateModels()).find((m) => m.id === id), {
    timeoutMs: 20_000,
    message: `loopgate model ${id}`,
  });
}

async function collect(response: vscode.LanguageModelChatResponse): Promise<unknown[]> {
  const parts: unknown[] = [];
  for await (const part of response.stream) parts.push(part);
  return parts;
}

const texts = (parts: unknown[]) =>
  parts.filter((p): p is vscode.LanguageModelTextPart => p instanceof vscode.LanguageModelTextPart).map((p) => p.value);

test(
  'the extension activates with a key of the default group and one of the Claude group',
  async () => {
    api = await startLoopgate(defaultAndClaude(keyOf));
    // Both keys reached the proxy, and each answers its GET /models.
    let last = '';
    await waitFor(
      async () => {
        const answer = await proxyKeys(api);
        last = answer.text;
        const keys = answer.keys;
        return keys.length === 2 && keys.every((k) => k.models?.length) ? keys : undefined;
      },
      { timeoutMs: 20_000, message: 'two keys with their models in the proxy' },
    )
      .catch((err: Error) => {
        throw new Error(`${err.message}; the proxy said: ${last.slice(0, 500)}`);
      })
      .catch(async (err: Error) => {
        throw new Error(
          `${err.message}; state ${JSON.stringify(api.host.state)}; stored key: ${(await api.readKey()) !== undefined}; secrets list: ${(await api.secrets.get('loopgate.apiKeys'))?.length}`,
        );
      });
  },
  { timeoutMs: 60_000 },
);

test(
  "selectChatModels({ vendor: 'loopgate' }) lists both groups' models, with limits and capabilities",
  async () => {
    const want = [...new Set([...groupModels('default'), ...groupModels('claude')])].sort();
    const models = await waitFor(
      async () => {
        const found = await loopgateModels();
        return want.every((id) => found.some((m) => m.id === id)) ? found : undefined;
      },
      { timeoutMs: 30_000, message: `loopgate models ${want.join(', ')}` },
    );
    assert.deepEqual([...new Set(models.map((m) => m.id))].sort(), want);
    const claude = models.find((m) => m.id === 'claude-sonnet-4-6')!;
    assert.equal(claude.vendor, 'loopgate');
    assert.equal(claude.maxInputTokens, 128_000);
    assert.equal(claude.family, 'claude-sonnet-4-6');
  },
  { timeoutMs: 40_000 },
);

test(
  'sendRequest streams the answer in more than one part (Responses, natively)',
  async () => {
    const m = await model('gpt-4.1');
    const response = await m.sendRequest(
      [vscode.LanguageModelChatMessage.User('hello from the VS Code chat')],
      {},
      new vscode.CancellationTokenSource().token,
    );
    const parts = texts(await collect(response));
    assert.ok(parts.length > 1, `one part only: ${JSON.stringify(parts)}`);
    assert.match(parts.join(''), /hello from the VS Code chat/);
  },
  { timeoutMs: 30_000 },
);

test(
  'a tool round trip on a Claude model (Anthropic Messages, natively)',
  async () => {
    const m = await model('claude-sonnet-4-6');
    const tools: vscode.LanguageModelChatTool[] = [
      {
        name: 'get_weather',
        description: 'Current weather of a city',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    ];
    const ask = vscode.LanguageModelChatMessage.User('What is the weather in Paris? Use get_weather.');
    const first = await collect(
      await m.sendRequest(
        [ask],
        { tools, toolMode: vscode.LanguageModelChatToolMode.Required },
        new vscode.CancellationTokenSource().token,
      ),
    );
    const call = first.find(
      (p): p is vscode.LanguageModelToolCallPart => p instanceof vscode.LanguageModelToolCallPart,
    );
    assert.ok(call, `no tool call among ${JSON.stringify(first)}`);
    assert.equal(call.name, 'get_weather');
    assert.equal(typeof (call.input as { city?: unknown }).city, 'string');
    const second = await collect(
      await m.sendRequest(
        [
          ask,
          vscode.LanguageModelChatMessage.Assistant([call]),
          vscode.LanguageModelChatMessage.User([
            new vscode.LanguageModelToolResultPart(call.callId, [new vscode.LanguageModelTextPart('sunny, 21 C')]),
          ]),
        ],
        { tools },
        new vscode.CancellationTokenSource().token,
      ),
    );
    assert.ok(texts(second).join('').length > 0, 'no text after the tool result');
    assert.ok(
      !second.some((p) => p instanceof vscode.LanguageModelToolCallPart),
      'a second tool call after the result',
    );
  },
  { timeoutMs: 30_000 },
);

test(
  'cancelling mid-stream aborts the upstream request (the simulator saw the client leave)',
  async () => {
    await fetch(`${simOrigin()}/_sim/requests`, { method: 'DELETE' });
    const m = await model('gpt-4o-mini');
    const cts = new vscode.CancellationTokenSource();
    const response = await m.sendRequest([vscode.LanguageModelChatMessage.User('a long story, please')], {}, cts.token);
    let seen = 0;
    try {
      for await (const part of response.text) {
        if (part) seen++;
        if (seen === 1) cts.cancel();
      }
    } catch {
      /* a cancelled stream may end by throwing */
    }
    type Rec = { path: string; ended?: string };
    const rec = await waitFor(
      async () => {
        const all = (await (await fetch(`${simOrigin()}/_sim/requests`)).json()) as Rec[];
        const r = all.find((x) => x.path.startsWith('/v1/responses'));
        return r?.ended ? r : undefined;
      },
      { timeoutMs: 10_000, message: 'the simulator to record how the stream ended' },
    );
    assert.equal(rec.ended, 'client-closed');
  },
  { timeoutMs: 30_000 },
);

test('a vscode.lm consumer shows a Loopgate model answering (the README screenshot)', async () => {
  const m = await model('claude-sonnet-4-6');
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: '' });
  const editor = await vscode.window.showTextDocument(doc);
  const question = 'Which protocol did this answer come through?';
  const header = [
    '# A `vscode.lm` consumer, talking to a Loopgate model',
    '',
    '```ts',
    "const [model] = await vscode.lm.selectChatModels({ vendor: 'loopgate', id: 'claude-sonnet-4-6' });",
    'const response = await model.sendRequest([vscode.LanguageModelChatMessage.User(question)]);',
    '```',
    '',
    `**Model:** ${m.name} (vendor \`${m.vendor}\`, family \`${m.family}\`, ${m.maxInputTokens.toLocaleString('en')} input tokens)`,
    '',
    `**You:** ${question}`,
    '',
    '**' + m.name + ':** ',
  ].join('\n');
  await editor.edit((e) => e.insert(new vscode.Position(0, 0), header));
  const response = await m.sendRequest(
    [vscode.LanguageModelChatMessage.User(question)],
    {},
    new vscode.CancellationTokenSource().token,
  );
  // Each part is appended as it arrives, as a chat view would render it.
  for await (const part of response.text)
    await editor.edit((e) => e.insert(doc.lineAt(doc.lineCount - 1).range.end, part));
  assert.match(doc.getText(), /\*\*claude-sonnet-4-6:\*\* \S+/);
});

test(
  'a key the service refuses (401): a LanguageModelError with the diagnosis',
  async () => {
    const m = await model('gpt-4.1');
    // The key was revoked in the console after it was stored: the models stay offered, the request says what to do.
    await api.keys.set('sk-e2e-revoked-in-the-console-0000000001');
    // The proxy held key-1 and claude; now key-1 alone, whose list fails.
    const held = async () => (await proxyKeys(api)).keys.map((k) => k.name);
    await waitFor(async () => ((await held()).join() === 'key-1' ? true : undefined), {
      timeoutMs: 20_000,
      message: 'the proxy to hold the revoked key',
    });
    let error: unknown;
    let answer: unknown[] = [];
    try {
      answer = await collect(
        await m.sendRequest(
          [vscode.LanguageModelChatMessage.User('hi')],
          {},
          new vscode.CancellationTokenSource().token,
        ),
      );
    } catch (err) {
      error = err;
    }
    const seen = JSON.stringify(
      (
        (await (await fetch(`${simOrigin()}/_sim/requests`)).json()) as Array<{
          time: string;
          path: string;
          status: number;
          credentials: unknown;
        }>
      )
        .filter((r) => !r.path.startsWith('/v1/models'))
        .slice(-2)
        .map((r) => [r.time, r.path, r.status, r.credentials]),
    );
    assert.ok(
      error instanceof vscode.LanguageModelError,
      `not a LanguageModelError: ${String(error)} (${(error as Error)?.constructor?.name}); answer ${JSON.stringify(texts(answer)).slice(0, 200)}; simulator saw ${seen}`,
    );
    assert.equal(error.code, vscode.LanguageModelError.NoPermissions().code);
    assert.match(error.message, /401/);
    assert.match(error.message, /Re-copy the key/);
    assert.ok(!error.message.includes('sk-e2e-revoked'), 'the key is quoted in the error');
  },
  { timeoutMs: 40_000 },
);

export const run = runTests;
