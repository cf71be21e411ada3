// Issue 12: one "did you mean". The proxy's diagnosis, its pre-forward hint
// and the language server's quick fix (the editor's only source) used to run
// two algorithms: `sonnet` got `claude-sonnet-4-6` from the proxy and nothing
// in the editor. Now every surface answers from rules/addresses/suggest.ts.
import { describe, expect, it } from 'vitest';
import { suggestModels } from '../../rules/addresses/suggest.js';
import { suggestModels as lintSuggest, lintConfig, LINT_CODES } from '../../rules/project/config-lint/index.js';
import { diagnose } from '../../rules/diagnosis/diagnose.js';

const MODELS = ['gpt-4o-mini', 'gpt-4.1', 'claude-sonnet-4-6', 'claude-haiku-4-5'];

describe('one "did you mean" for every surface', () => {
  it('the config-lint export is the rules function itself', () => {
    expect(lintSuggest).toBe(suggestModels);
  });

  it('`sonnet` gets claude-sonnet-4-6 from the proxy diagnosis and from the language server', () => {
    expect(suggestModels('sonnet', MODELS)).toEqual(['claude-sonnet-4-6']);

    const d = diagnose(
      { status: 503, code: 'model_not_found' },
      {
        method: 'POST',
        originalPath: '/v1/messages',
        canonicalPath: '/v1/messages',
        time: new Date(0),
        model: 'sonnet',
        knownModels: MODELS,
      },
    );
    expect(d?.suggestions).toEqual(['claude-sonnet-4-6']);

    const lint = lintConfig('ANTHROPIC_MODEL=sonnet\n', { fileName: '.env' }, { models: MODELS }).find(
      (x) => x.code === LINT_CODES.unknownModel,
    );
    expect(lint?.message).toContain('Did you mean "claude-sonnet-4-6"?');
    expect(lint?.fixes.map((f) => f.edits[0]!.newText)).toEqual(['claude-sonnet-4-6']);
  });

  it('a case-only difference is the one answer everywhere', () => {
    expect(suggestModels('GPT-4O-MINI', [...MODELS, 'gpt-4o-mini-2024-07-18'])).toEqual(['gpt-4o-mini']);
  });

  it('unrelated IDs still get nothing', () => {
    expect(suggestModels('llama-3-70b', MODELS)).toEqual([]);
  });
});
