// The environment handed to tools and to the proxy child: only the local token
// and base URLs go out; credential-named variables never reach a child.
import { describe, expect, it } from 'vitest';
import { clientEnv, exportLines } from '../../rules/project/client-env.js';
import { childEnv } from '../../extension/child-env.js';

describe('client environment', () => {
  it('points both SDK families at the proxy with the token, under every variable of the table', () => {
    expect(clientEnv('http://127.0.0.1:8787', 'lg-local-t')).toEqual({
      OPENAI_BASE_URL: 'http://127.0.0.1:8787/v1',
      OPENAI_API_BASE: 'http://127.0.0.1:8787/v1',
      OPENAI_API_KEY: 'lg-local-t',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787',
      ANTHROPIC_AUTH_TOKEN: 'lg-local-t',
      ANTHROPIC_API_KEY: 'lg-local-t',
    });
  });

  it('leaves out what a tool takes as a conflict (Claude Code: ANTHROPIC_API_KEY next to ANTHROPIC_AUTH_TOKEN)', () => {
    const env = clientEnv('http://127.0.0.1:8787', 'lg-local-t', 'claude');
    expect(env.ANTHROPIC_AUTH_TOKEN).toBe('lg-local-t');
    expect('ANTHROPIC_API_KEY' in env).toBe(false);
  });

  it('quotes values for each shell', () => {
    const env = { A: "it's $x `y`" };
    expect(exportLines(env, 'sh')).toEqual([`export A='it'\\''s $x \`y\`'`]);
    expect(exportLines(env, 'fish')).toEqual([`set -gx A 'it'\\''s $x \`y\`'`]);
    expect(exportLines(env, 'powershell')).toEqual(['$env:A = "it\'s `$x ``y``"']);
  });
});

describe('proxy child environment (canary)', () => {
  it('drops every credential-named variable and keeps the rest', () => {
    const canary = 'sk-child-env-canary-0000000000000000';
    const env = childEnv({
      PATH: '/usr/bin',
      OPENAI_API_KEY: canary,
      LOOPGATE_TOKEN: canary,
      MY_SECRET: canary,
      GITHUB_Token: canary,
      HOME: '/home/x',
    });
    expect(env.PATH).toBe('/usr/bin');
    expect(env.HOME).toBe('/home/x');
    expect(JSON.stringify(env)).not.toContain(canary);
  });

  it('drops every OTEL_* variable: the editor decides where spans go (loopgate.otlp.endpoint), and the headers carry a token', () => {
    const canary = 'otlp-child-env-canary-000000000000';
    const env = childEnv({
      PATH: '/usr/bin',
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${canary}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://${canary}:4318`,
      otel_service_name: canary,
    });
    expect(Object.keys(env).filter((k) => /^otel_/i.test(k))).toEqual([]);
    expect(JSON.stringify(env)).not.toContain(canary);
  });
});

describe('proxy child environment: variables holding a key under an innocent name (issue 23 F-A, the rule `run` uses)', () => {
  const editorKey = 'Q2FuYXJ5RWRpdG9yS2V5MDAwMQ==';
  const listKey = 'sk-child-env-list-canary-000000000000';
  it('drops a variable holding a key the editor holds, or a key of LOOPGATE_API_KEY, even inside a longer value', () => {
    const env = childEnv(
      {
        PATH: '/usr/bin',
        LOOPGATE_API_KEY: `alpha=${listKey}`,
        NOTES: `old ${editorKey} here`,
        BACKUP: listKey,
        HOME: '/home/x',
      },
      [editorKey],
    );
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/x', ELECTRON_RUN_AS_NODE: '1' });
  });

  it('the language server overrides set them to undefined too', async () => {
    const { childEnvOverrides } = await import('../../extension/child-env.js');
    const parent = { PATH: '/usr/bin', NOTES: `old ${editorKey} here` };
    const merged: NodeJS.ProcessEnv = { ...parent, ...childEnvOverrides(parent, [editorKey]) };
    expect(merged.NOTES).toBeUndefined();
    expect(merged.PATH).toBe('/usr/bin');
  });
});

describe('language server environment overrides (canary)', () => {
  it('sets credential-named variables to undefined so a merging launcher drops them', async () => {
    const { childEnvOverrides } = await import('../../extension/child-env.js');
    const canary = 'sk-lsp-env-canary-00000000000000000000';
    const parent = { PATH: '/usr/bin', OPENAI_API_KEY: canary, AWS_SECRET_ACCESS_KEY: canary };
    // vscode-languageclient does exactly this merge (process.env first, then options.env).
    const merged: NodeJS.ProcessEnv = { ...parent, ...childEnvOverrides(parent) };
    const passed = Object.entries(merged).filter(([, v]) => v !== undefined);
    expect(JSON.stringify(passed)).not.toContain(canary);
    expect(merged.PATH).toBe('/usr/bin');
  });
});
