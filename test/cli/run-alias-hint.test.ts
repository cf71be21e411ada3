// `loopgate run`: a tool that exits after the proxy refused its model (no key
// serves it, as Codex's default on a relay that lacks it) leaves the user one
// line saying which alias fixes it. The built CLI, a real proxy and simulator,
// and a `node -e` tool that makes the requests a real tool would.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempHome } from './io.js';
import { runBuiltCli } from './terminal-run.js';
import { KEYS, namedKeys, startStack, TOKEN, type Stack } from '../proxy/stack.js';

/** Two requests for `model` through the proxy (a tool that retries once), then exit 1 as the tool would. */
const TOOL = (model: string) => `
const ask = () => fetch(process.env.OPENAI_BASE_URL + '/chat/completions', {
  method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' },
  body: JSON.stringify({ model: ${JSON.stringify(model)}, messages: [{ role: 'user', content: 'hi' }] }),
}).then((r) => r.status);
(async () => { const a = await ask(); const b = await ask(); console.log('statuses', a, b); process.exit(a === 200 ? 0 : 1); })();`;

const runTool = (port: string, script: string) =>
  runBuiltCli(['run', '--port', port, '--', process.execPath, '-e', script], {
    env: { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN },
  });

describe('loopgate run: the alias hint after a refused model', () => {
  let stack: Stack;
  let port: string;
  beforeAll(async () => {
    stack = await startStack({
      key: undefined,
      keys: namedKeys({ openai: KEYS.default, claude: KEYS.claude }),
    });
    port = new URL(stack.proxy.url).port;
  });
  afterAll(() => stack?.close());

  it('prints it once when the tool exits, with the exact --alias and loopgate.json line', async () => {
    const r = await runTool(port, TOOL('gpt-6.2-sol'));
    expect(r.out).toContain('statuses 404 404');
    expect(r.code).toBe(1);
    const hints = r.err.split('\n').filter((l) => l.startsWith('loopgate run: the proxy refused model'));
    expect(hints).toEqual([
      'loopgate run: the proxy refused model "gpt-6.2-sol" (no key serves it) 2 times while the tool ran. To send "gpt-6.2-sol" as "gpt-6.1-sol", add a model alias: `loopgate serve --alias gpt-6.2-sol=gpt-6.1-sol`, or "gpt-6.2-sol": "gpt-6.1-sol" under "aliases" in loopgate.json (or the loopgate.aliases setting in VS Code).',
    ]);
  });

  it('says nothing when every model was served', async () => {
    const r = await runTool(port, TOOL('gpt-4o-mini'));
    expect(r.out).toContain('statuses 200 200');
    expect(r.code).toBe(0);
    expect(r.err).not.toContain('refused model');
  });
});
