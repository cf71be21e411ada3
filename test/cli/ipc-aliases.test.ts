// The editor's path for aliases: `loopgate serve --ipc` forked as the extension
// forks it, the `loopgate.aliases` setting and the workspace folder in the start
// message. loopgate.json found from the workspace folder wins over the setting;
// a problem is shown as a hint line and the proxy starts with the usable aliases.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectAliasMessages, ipcServeForSuite } from './ipc-run.js';

const TOKEN = 'lg-local-ipc-alias-token-0123456789abcdef';

describe('serve --ipc with aliases from the editor', () => {
  const forkServe = ipcServeForSuite();

  it('applies the setting and the workspace loopgate.json (the file winning), and reports a bad entry as a hint', async () => {
    const root = mkdtempSync(join(tmpdir(), 'loopgate-ipc-project-'));
    writeFileSync(join(root, 'loopgate.json'), JSON.stringify({ aliases: { 'gpt-6.2-sol': 'gpt-6.1-sol' } }));
    const folder = join(root, 'packages', 'app');
    mkdirSync(folder, { recursive: true });
    const { messages, listening } = await forkServe(
      {
        port: 0,
        logBodies: false,
        requireToken: true,
        aliases: { 'gpt-6.2-sol': 'gpt-4.1', 'claude-opus-9': 'claude-sonnet-4-6', broken: 'broken' },
        projectDir: folder,
      },
      TOKEN,
    );
    expectAliasMessages(messages, [
      'gpt-6.2-sol -> gpt-6.1-sol (loopgate.json)',
      'claude-opus-9 -> claude-sonnet-4-6 (loopgate.aliases)',
    ]);

    const ask = (model: string, path: string) =>
      fetch(`${listening.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      });
    const openai = await ask('gpt-6.2-sol', '/v1/chat/completions');
    expect(openai.status).toBe(200);
    expect(openai.headers.get('x-loopgate-alias')).toBe('gpt-6.2-sol -> gpt-6.1-sol');
    expect(((await openai.json()) as { model: string }).model).toBe('gpt-6.1-sol');
    const claude = await ask('claude-opus-9', '/v1/messages');
    expect(claude.status).toBe(200);
    expect(claude.headers.get('x-loopgate-alias')).toBe('claude-opus-9 -> claude-sonnet-4-6');
  });
});
