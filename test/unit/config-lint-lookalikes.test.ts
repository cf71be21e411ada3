// Text that looks like a config mistake but is not (an escaped string, a Hugo
// baseURL, an OpenAPI file, sk-shaped package names), and the real ones next
// to it that must still be caught: no false diagnosis, no fix that breaks a file.
import { describe, expect, it } from 'vitest';
import { lintConfig } from '../../rules/project/config-lint/index.js';

const codes = (text: string, fileName: string) => lintConfig(text, { fileName }).map((d) => d.code);

describe('config lint: look-alikes are left alone, the real mistakes still caught', () => {
  it('an env-style assignment inside an escaped string stops at the backslash', () => {
    const ts = 'const env = "OPENAI_BASE_URL=https://example.test/v1/v1\\nOPENAI_MODEL=gpt-4o\\n";\n';
    const d = lintConfig(ts, { fileName: 'x.ts' });
    expect(d.map((x) => x.code)).toEqual(['loopgate.duplicate-v1']);
    expect(ts.slice(d[0]!.start, d[0]!.end)).toBe('https://example.test/v1/v1');
  });

  it('createAnthropic (AI SDK) takes a /v1 base: no Anthropic-prefix warning, and /v1/v1 is still caught', () => {
    expect(codes("createAnthropic({ baseURL: 'https://relay.example.com/v1' });\n", 'a.ts')).toEqual([]);
    expect(codes("createAnthropic({ baseURL: 'https://relay.example.com/v1/v1' });\n", 'a.ts')).toEqual([
      'loopgate.duplicate-v1',
    ]);
  });

  it('a Hugo config.toml baseURL is not an OpenAI base', () => {
    expect(codes('baseURL = "https://example.org/"\ntitle = "My blog"\n', 'config.toml')).toEqual([]);
  });

  it('a Codex config.toml base_url is still checked', () => {
    expect(codes('[model_providers.relay]\nbase_url = "https://relay.example.com/v1/v1"\n', 'config.toml')).toEqual([
      'loopgate.duplicate-v1',
    ]);
  });

  it('an OpenAPI file mentioning "responses" does not make an unrelated base_url OpenAI-style', () => {
    expect(
      codes(
        'base_url: https://api.github.com\npaths:\n  /repos:\n    get:\n      responses:\n        "200": {}\n',
        'openapi.yaml',
      ),
    ).toEqual([]);
  });

  it('package names shaped like sk- are not keys', () => {
    expect(codes('deps = ["sk-learn-preprocessing-tools"]\n', 'a.py')).toEqual([]);
  });
});
