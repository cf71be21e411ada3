// opencode (`opencode-ai`, the version pinned in scripts/provision-agents.mjs), run
// for real with `opencode run` (non-interactive) and offline: its provider config
// points an OpenAI-compatible provider (chat completions) and its built-in
// Anthropic provider (Messages) at Loopgate, the base URLs and the key read from
// the variables `loopgate run` exports. The cases are every agent's (agent-matrix.ts).
import { agentVersion, opencodeBinary } from './agent-binaries.js';
import { describeAgentSuite } from './agent-matrix.js';

const OPENCODE = opencodeBinary();

/**
 * The user's opencode config: `{env:…}` is opencode's own substitution, so the
 * file holds no address or key. `suffix` is what a user might paste after the base (the broken cases).
 * small_model: opencode titles each session with a small model of the provider; name one the groups serve.
 */
function config(suffix: string): string {
  return JSON.stringify({
    autoupdate: false,
    share: 'disabled',
    small_model: 'loopgate/gpt-4o-mini',
    provider: {
      loopgate: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Loopgate',
        options: { baseURL: `{env:OPENAI_BASE_URL}${suffix}`, apiKey: '{env:OPENAI_API_KEY}' },
        models: { 'gpt-4.1': { name: 'gpt-4.1' }, 'gpt-4o-mini': { name: 'gpt-4o-mini' } },
      },
      anthropic: { options: { baseURL: `{env:ANTHROPIC_BASE_URL}/v1${suffix}` } },
    },
  });
}

describeAgentSuite({
  title: `opencode ${agentVersion('opencode-ai')}`,
  modeTitles: { openai: 'OpenAI-compatible provider', anthropic: 'Anthropic provider' },
  word: 'opencode',
  tool: 'bash',
  ownModelOnly: true,
  echoApart: true,
  // `loopgate run --port P -- opencode run -m PROVIDER/MODEL PROMPT`, with opencode's own switches: no update
  // checks, no models.dev fetch, no plugin or LSP downloads, no sharing.
  run: (ctx, c) =>
    ctx.viaRun(
      c.proxy,
      [OPENCODE, 'run', '-m', `${c.mode === 'openai' ? 'loopgate' : 'anthropic'}/${c.model}`, c.prompt],
      ctx.env({
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_CONFIG_CONTENT: config(c.suffix),
      }),
    ),
});
