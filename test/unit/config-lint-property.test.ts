// Property: whatever mix of /v1 and endpoint paths a base URL carries, applying
// the preferred quick fixes leaves a URL the same rules accept, in every file kind.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyEdits, LINT_CODES, lintConfig, type LintDiagnostic } from '../../rules/project/config-lint/index.js';

const URL_CODES = new Set<string>([
  LINT_CODES.duplicateV1,
  LINT_CODES.endpointInBase,
  LINT_CODES.missingV1,
  LINT_CODES.anthropicEndsV1,
]);

const host = fc.constantFrom('relay.example.test', 'api.example.test:8443', 'gw.example.test');
const prefix = fc.constantFrom('', '/api', '/openai/relay');
const tail = fc.array(fc.constantFrom('/v1', '/chat/completions', '/responses', '/messages', '/models'), {
  maxLength: 4,
});
const url = fc
  .tuple(host, prefix, tail, fc.boolean())
  .map(([h, p, t, slash]) => `https://${h}${p}${t.join('')}${slash ? '/' : ''}`);

const TEMPLATES: Array<{ fileName: string; openai: (u: string) => string; anthropic: (u: string) => string }> = [
  { fileName: '.env', openai: (u) => `OPENAI_BASE_URL=${u}\n`, anthropic: (u) => `ANTHROPIC_BASE_URL=${u}\n` },
  {
    fileName: 'a.yaml',
    openai: (u) => `env:\n  OPENAI_BASE_URL: "${u}"\n`,
    anthropic: (u) => `env:\n  ANTHROPIC_BASE_URL: ${u}\n`,
  },
  {
    fileName: 'config.toml',
    openai: (u) => `[model_providers.relay]\nbase_url = "${u}"\n`,
    anthropic: (u) => `[x]\nanthropic_base_url = "${u}"\n`,
  },
  {
    fileName: 'settings.json',
    openai: (u) => `{"OPENAI_BASE_URL": "${u}"}`,
    anthropic: (u) => `{"ANTHROPIC_BASE_URL": "${u}"}`,
  },
  {
    fileName: 'a.ts',
    openai: (u) => `new OpenAI({ baseURL: '${u}' });\n`,
    anthropic: (u) => `new Anthropic({ baseURL: '${u}' });\n`,
  },
  { fileName: 'a.py', openai: (u) => `OpenAI(base_url="${u}")\n`, anthropic: (u) => `Anthropic(base_url="${u}")\n` },
];

function fixAll(text: string, fileName: string): string {
  for (let round = 0; round < 4; round++) {
    const d: LintDiagnostic | undefined = lintConfig(text, { fileName }).find((x) => URL_CODES.has(x.code));
    if (!d) return text;
    expect(d.fixes.length, `${d.code} has a fix`).toBeGreaterThan(0);
    text = applyEdits(text, d.fixes[0]!.edits);
  }
  return text;
}

describe('URL quick fixes converge', () => {
  for (const t of TEMPLATES) {
    it(`${t.fileName}: OpenAI-style and Anthropic`, () => {
      fc.assert(
        fc.property(url, (u) => {
          const openai = fixAll(t.openai(u), t.fileName);
          expect(lintConfig(openai, { fileName: t.fileName }).filter((d) => URL_CODES.has(d.code))).toEqual([]);
          expect(openai).toMatch(/\/v1\/?["'\n]/);
          const anthropic = fixAll(t.anthropic(u), t.fileName);
          expect(lintConfig(anthropic, { fileName: t.fileName }).filter((d) => URL_CODES.has(d.code))).toEqual([]);
          expect(anthropic).not.toMatch(/\/v1/);
        }),
        { numRuns: 60 },
      );
    });
  }
});
