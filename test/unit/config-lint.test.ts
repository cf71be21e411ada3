// The config-lint rules over a corpus of realistic snippets: each finding, its
// range, its quick fix applied to the text, and silence after the fix.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  applyEdits,
  LINT_CODES,
  lintConfig,
  MAX_DIAGNOSTICS,
  MAX_LINT_CHARS,
  type LintCode,
  type LintContext,
  type LintDiagnostic,
} from '../../rules/project/config-lint/index.js';

const FIXTURES = join(__dirname, '..', 'fixtures', 'config-lint');
const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
// Looks like a key to the scanner; not a real one.
const KEY = 'sk-Zq81Lm0Pk2Nx7Rt4Vb6Wc3Yd';
const ANT_KEY = 'sk-ant-api03-Q7w2Er9Ty4Ui1Op8As5Df';

function find(diags: LintDiagnostic[], code: LintCode): LintDiagnostic[] {
  return diags.filter((d) => d.code === code);
}

/** Lints, checks exactly one `code` finding over `flagged`, applies its preferred fix, and re-lints. */
function fixOne(
  text: string,
  fileName: string,
  code: LintCode,
  flagged: string,
  ctx: LintContext = {},
  fixIndex = 0,
): string {
  const hits = find(lintConfig(text, { fileName }, ctx), code);
  expect(hits, `${code} in ${fileName}`).toHaveLength(1);
  const d = hits[0]!;
  expect(text.slice(d.start, d.end)).toBe(flagged);
  expect(d.fixes.length).toBeGreaterThan(fixIndex);
  const fixed = applyEdits(text, d.fixes[fixIndex]!.edits);
  expect(find(lintConfig(fixed, { fileName }, ctx), code), `${code} after the fix`).toEqual([]);
  return fixed;
}

describe('duplicated /v1', () => {
  it('dotenv: flags and removes it', () => {
    const text = fixture('duplicate-v1.env');
    const fixed = fixOne(text, '.env', LINT_CODES.duplicateV1, 'https://example.test/v1/v1');
    expect(fixed).toContain('OPENAI_BASE_URL=https://example.test/v1\n');
    expect(lintConfig(fixed, { fileName: '.env' })).toEqual([]);
  });

  it('Codex config.toml base_url', () => {
    const text = fixture('codex-config.toml');
    const fixed = fixOne(text, 'config.toml', LINT_CODES.duplicateV1, 'https://relay.example.test/v1/v1');
    expect(fixed).toContain('base_url = "https://relay.example.test/v1"\n');
  });

  it('YAML, unquoted with a trailing comment', () => {
    const text = 'llm:\n  provider: openai\n  base_url: https://relay.example.test/v1/v1  # from the console\n';
    const fixed = fixOne(text, 'app.yaml', LINT_CODES.duplicateV1, 'https://relay.example.test/v1/v1');
    expect(fixed).toBe('llm:\n  provider: openai\n  base_url: https://relay.example.test/v1  # from the console\n');
  });

  it('JSON settings with an OPENAI_BASE_URL env block', () => {
    const text =
      '{\n  "terminal.integrated.env.linux": {\n    "OPENAI_BASE_URL": "https://relay.example.test/v1/v1/"\n  }\n}\n';
    const fixed = fixOne(text, 'settings.json', LINT_CODES.duplicateV1, 'https://relay.example.test/v1/v1/');
    expect(fixed).toContain('"OPENAI_BASE_URL": "https://relay.example.test/v1"');
  });

  it('docker-compose list item KEY=value', () => {
    const text = 'services:\n  app:\n    environment:\n      - OPENAI_BASE_URL=https://relay.example.test/v1/v1\n';
    const fixed = fixOne(text, 'docker-compose.yml', LINT_CODES.duplicateV1, 'https://relay.example.test/v1/v1');
    expect(fixed).toContain('- OPENAI_BASE_URL=https://relay.example.test/v1\n');
  });
});

describe('endpoint path in a base URL', () => {
  it('Python OpenAI(base_url=...)', () => {
    const text = fixture('client.py');
    const fixed = fixOne(
      text,
      'client.py',
      LINT_CODES.endpointInBase,
      'https://relay.example.test/v1/chat/completions',
    );
    expect(fixed).toContain('base_url="https://relay.example.test/v1",');
  });

  it('TS new OpenAI({ baseURL })', () => {
    const text = fixture('client.ts');
    const fixed = fixOne(text, 'client.ts', LINT_CODES.endpointInBase, 'https://relay.example.test/v1/responses');
    expect(fixed).toContain("baseURL: 'https://relay.example.test/v1',");
  });

  it('.env.local with a pasted full address', () => {
    const fixed = fixOne(
      'OPENAI_API_BASE="https://relay.example.test/v1/chat/completions"\n',
      '.env.local',
      LINT_CODES.endpointInBase,
      'https://relay.example.test/v1/chat/completions',
    );
    expect(fixed).toBe('OPENAI_API_BASE="https://relay.example.test/v1"\n');
  });
});

describe('OpenAI base without /v1', () => {
  it('TS process.env assignment; fix adds /v1', () => {
    const text = fixture('client.ts');
    const fixed = fixOne(text, 'client.ts', LINT_CODES.missingV1, 'https://relay.example.test');
    expect(fixed).toContain("process.env.OPENAI_BASE_URL = 'https://relay.example.test/v1';");
  });

  it('Python os.environ assignment', () => {
    const text = 'import os\nos.environ["OPENAI_BASE_URL"] = "https://relay.example.test"\n';
    fixOne(text, 'run.py', LINT_CODES.missingV1, 'https://relay.example.test');
  });
});

describe('Anthropic prefix', () => {
  it('TS new Anthropic({ baseURL }) ending in /v1/messages', () => {
    const text = fixture('client.ts');
    const fixed = fixOne(text, 'client.ts', LINT_CODES.anthropicEndsV1, 'https://relay.example.test/v1/messages');
    expect(fixed).toContain("new Anthropic({ baseURL: 'https://relay.example.test' })");
  });

  it('Python Anthropic(base_url=...) ending in /v1', () => {
    const text = fixture('client.py');
    const fixed = fixOne(text, 'client.py', LINT_CODES.anthropicEndsV1, 'https://relay.example.test/v1');
    expect(fixed).toContain('claude = Anthropic(base_url="https://relay.example.test")');
  });

  it('dotenv, YAML and Claude Code settings.json', () => {
    fixOne(
      'ANTHROPIC_BASE_URL=https://relay.example.test/v1\n',
      '.env',
      LINT_CODES.anthropicEndsV1,
      'https://relay.example.test/v1',
    );
    fixOne(
      'env:\n  ANTHROPIC_BASE_URL: "https://relay.example.test/v1/messages"\n',
      'ci.yaml',
      LINT_CODES.anthropicEndsV1,
      'https://relay.example.test/v1/messages',
    );
    fixOne(
      '{ "env": { "ANTHROPIC_BASE_URL": "https://relay.example.test/api/v1" } }',
      'settings.json',
      LINT_CODES.anthropicEndsV1,
      'https://relay.example.test/api/v1',
    );
    fixOne(
      'import os\nos.environ.setdefault("ANTHROPIC_BASE_URL", "https://relay.example.test/v1")\n',
      'x.py',
      LINT_CODES.anthropicEndsV1,
      'https://relay.example.test/v1',
    );
  });

  it('never gets the OpenAI rule: a bare {site_url} is right', () => {
    const texts: Array<[string, string]> = [
      ['.env', 'ANTHROPIC_BASE_URL=https://relay.example.test\n'],
      ['a.ts', "const a = new Anthropic({ baseURL: 'https://relay.example.test' });\n"],
      ['a.py', 'a = Anthropic(base_url="https://relay.example.test/prefix")\n'],
      ['settings.json', '{"env": {"ANTHROPIC_BASE_URL": "https://relay.example.test"}}'],
    ];
    for (const [fileName, text] of texts) expect(lintConfig(text, { fileName }), fileName).toEqual([]);
  });
});

describe('http:// to a remote host', () => {
  it('is an error without a fix; loopback http is fine', () => {
    const diags = lintConfig(
      'OPENAI_BASE_URL=http://relay.example.test/v1\nANTHROPIC_BASE_URL=http://127.0.0.1:8787\n',
      { fileName: '.env' },
    );
    expect(diags.map((d) => [d.code, d.severity, d.fixes.length])).toEqual([[LINT_CODES.insecureHttp, 'error', 0]]);
  });
});

describe('API key written in a file', () => {
  it('TS: replaced with process.env.OPENAI_API_KEY', () => {
    const fixed = fixOne(fixture('client.ts'), 'client.ts', LINT_CODES.apiKeyInFile, KEY);
    expect(fixed).toContain('apiKey: process.env.OPENAI_API_KEY,');
    expect(fixed).not.toContain(KEY);
  });

  it('Python: replaced with os.environ[...] and `import os` added', () => {
    const fixed = fixOne(fixture('client.py'), 'client.py', LINT_CODES.apiKeyInFile, KEY);
    expect(fixed).toContain('api_key=os.environ["OPENAI_API_KEY"],');
    // After the shebang and the module docstring, so the docstring stays one.
    expect(fixed).toMatch(
      /^#!\/usr\/bin\/env python3\n"""Calls the relay\.\n[\s\S]*?"""\nimport os\nfrom openai import OpenAI\n/,
    );
  });

  it('Python: `import os` goes after __future__ imports, and is not added twice', () => {
    const text = `from __future__ import annotations\nimport sys\nkey = "${KEY}"\n`;
    expect(fixOne(text, 'a.py', LINT_CODES.apiKeyInFile, KEY)).toBe(
      'from __future__ import annotations\nimport os\nimport sys\nkey = os.environ["OPENAI_API_KEY"]\n',
    );
    const withOs = `import sys, os\nkey = '${KEY}'\n`;
    expect(fixOne(withOs, 'a.py', LINT_CODES.apiKeyInFile, KEY)).toBe(
      'import sys, os\nkey = os.environ["OPENAI_API_KEY"]\n',
    );
  });

  it('Python: an Anthropic key in a header gets an f-string', () => {
    const text = `import os\nheaders = {"x-api-key": "${ANT_KEY}", "auth": "Bearer ${KEY}"}\n`;
    const diags = find(lintConfig(text, { fileName: 'h.py' }), LINT_CODES.apiKeyInFile);
    expect(diags).toHaveLength(2);
    const fixedA = applyEdits(text, diags[0]!.fixes[0]!.edits);
    expect(fixedA).toContain(`"x-api-key": os.environ["ANTHROPIC_API_KEY"]`);
    const fixedB = applyEdits(text, diags[1]!.fixes[0]!.edits);
    expect(fixedB).toContain(`"auth": f"Bearer {os.environ['OPENAI_API_KEY']}"`);
  });

  it('docker-compose: ${VAR} reference (Compose expands it), named after the setting when it is an env name', () => {
    expect(
      fixOne(
        `services:\n  app:\n    environment:\n      OPENAI_API_KEY: ${KEY}\n`,
        'docker-compose.yml',
        LINT_CODES.apiKeyInFile,
        KEY,
      ),
    ).toBe('services:\n  app:\n    environment:\n      OPENAI_API_KEY: ${OPENAI_API_KEY}\n');
  });

  it('.env: information only, with the Set API Key command; .env.example: a warning with a removal fix', () => {
    const [d] = lintConfig(`OPENAI_API_KEY=${KEY}\n`, { fileName: '.env' });
    expect(d).toMatchObject({ code: LINT_CODES.apiKeyInFile, severity: 'information', fixes: [] });
    expect(d!.commands).toEqual([{ title: 'Store it with Loopgate: Set API Key', command: 'loopgate.setApiKey' }]);
    const fixed = fixOne(`OPENAI_API_KEY=${KEY}\n`, '.env.example', LINT_CODES.apiKeyInFile, KEY);
    expect(fixed).toBe('OPENAI_API_KEY=\n');
  });

  it('a key in a comment is still reported, but gets no text edit', () => {
    const [d] = lintConfig(`// old key: ${KEY}\nexport {};\n`, { fileName: 'a.ts' });
    expect(d).toMatchObject({ code: LINT_CODES.apiKeyInFile, fixes: [] });
    expect(d!.commands.map((c) => c.command)).toEqual(['loopgate.setApiKey']);
  });

  it('messages never quote the key (canary)', () => {
    const texts: Array<[string, string]> = [
      ['.env', `OPENAI_API_KEY=${KEY}\nANTHROPIC_API_KEY=${ANT_KEY}\n`],
      ['.env.example', `OPENAI_API_KEY=${KEY}\n`],
      ['a.ts', `const k = "${KEY}";\n`],
      ['a.py', `k = "${ANT_KEY}"\n`],
      ['a.yaml', `key: ${KEY}\n`],
    ];
    for (const [fileName, text] of texts) {
      const diags = lintConfig(text, { fileName });
      expect(diags.length, fileName).toBeGreaterThan(0);
      for (const d of diags) {
        const shown = JSON.stringify([d.message, d.fixes.map((f) => f.title), d.commands]);
        expect(shown).not.toContain(KEY.slice(3, 15));
        expect(shown).not.toContain(ANT_KEY.slice(7, 19));
      }
    }
  });
});

describe('model IDs', () => {
  const ctx: LintContext = { models: ['gpt-4o-mini', 'gpt-5.1', 'claude-sonnet-4-6'] };

  it('did you mean, with a fix to the closest ID, in every model-ish position', () => {
    expect(fixOne('OPENAI_MODEL=gpt-4o-mni\n', '.env', LINT_CODES.unknownModel, 'gpt-4o-mni', ctx)).toBe(
      'OPENAI_MODEL=gpt-4o-mini\n',
    );
    expect(fixOne('{"model": "claude-sonet-4-6"}', 'req.json', LINT_CODES.unknownModel, 'claude-sonet-4-6', ctx)).toBe(
      '{"model": "claude-sonnet-4-6"}',
    );
    expect(fixOne('model = "gpt-5"\n', 'config.toml', LINT_CODES.unknownModel, 'gpt-5', ctx)).toBe(
      'model = "gpt-5.1"\n',
    );
    expect(
      fixOne(
        'r = client.responses.create(model="GPT-4o-mini", input="hi")\n',
        'a.py',
        LINT_CODES.unknownModel,
        'GPT-4o-mini',
        ctx,
      ),
    ).toContain('model="gpt-4o-mini"');
    expect(
      fixOne(
        "await client.chat.completions.create({ model: 'gpt4o-mini', messages });\n",
        'a.ts',
        LINT_CODES.unknownModel,
        'gpt4o-mini',
        ctx,
      ),
    ).toContain("model: 'gpt-4o-mini'");
    expect(fixOne('model: gpt-4o-mini-2024\n', 'a.yaml', LINT_CODES.unknownModel, 'gpt-4o-mini-2024', ctx)).toBe(
      'model: gpt-4o-mini\n',
    );
  });

  it('the message names the list and the suggestions', () => {
    const [d] = lintConfig('OPENAI_MODEL=gpt-4o-mni\n', { fileName: '.env' }, ctx);
    expect(d!.message).toBe(
      'Model "gpt-4o-mni" is not in this key\'s GET /models list. Did you mean "gpt-4o-mini"? Copy the model ID exactly from the list.',
    );
  });

  it('silent when the list is unknown, when the ID is listed, and for non-IDs', () => {
    expect(lintConfig('OPENAI_MODEL=gpt-4o-mni\n', { fileName: '.env' })).toEqual([]);
    expect(lintConfig('OPENAI_MODEL=gpt-4o-mni\n', { fileName: '.env' }, { models: [] })).toEqual([]);
    expect(lintConfig('OPENAI_MODEL=gpt-4o-mini\nOPENAI_MODEL=${MODEL}\n', { fileName: '.env' }, ctx)).toEqual([]);
    expect(
      lintConfig(
        "const User = mongoose.model('User', schema); const x = { model: 'User' };\n",
        { fileName: 'a.ts' },
        ctx,
      ),
    ).toEqual([]);
    expect(lintConfig('model_provider = "relay"\n', { fileName: 'config.toml' }, ctx)).toEqual([]);
  });
});

describe('pointing at the service while the proxy runs', () => {
  const ctx: LintContext = { proxyUrl: 'http://127.0.0.1:8787' };

  it('OpenAI-style gets proxy + /v1, Anthropic gets the proxy origin', () => {
    expect(
      fixOne(
        'OPENAI_BASE_URL=https://relay.example.test/v1\n',
        '.env',
        LINT_CODES.directToService,
        'https://relay.example.test/v1',
        ctx,
      ),
    ).toBe('OPENAI_BASE_URL=http://127.0.0.1:8787/v1\n');
    expect(
      fixOne(
        'ANTHROPIC_BASE_URL=https://relay.example.test\n',
        '.env',
        LINT_CODES.directToService,
        'https://relay.example.test',
        ctx,
      ),
    ).toBe('ANTHROPIC_BASE_URL=http://127.0.0.1:8787\n');
    const [d] = lintConfig('OPENAI_BASE_URL=https://relay.example.test/v1\n', { fileName: '.env' }, ctx);
    expect(d!.severity).toBe('information');
  });

  it('silent when the proxy is not running, and for loopback addresses', () => {
    expect(lintConfig('OPENAI_BASE_URL=https://relay.example.test/v1\n', { fileName: '.env' })).toEqual([]);
    expect(
      lintConfig(
        'OPENAI_BASE_URL=http://127.0.0.1:8787/v1\nANTHROPIC_BASE_URL=http://localhost:8787\n',
        { fileName: '.env' },
        ctx,
      ),
    ).toEqual([]);
  });
});

describe('negative cases stay silent', () => {
  const ctx: LintContext = { models: ['gpt-4o-mini'], proxyUrl: 'http://127.0.0.1:8787' };
  const silent: Array<[string, string]> = [
    [
      '.env',
      'OPENAI_BASE_URL=http://127.0.0.1:8787/v1\nANTHROPIC_BASE_URL=http://127.0.0.1:8787\nOPENAI_API_KEY=lg-local-Zq81Lm0Pk2Nx7Rt4Vb6Wc3Yd-sk-Zq81Lm0Pk2Nx7Rt4Vb6\n',
    ],
    [
      '.env',
      '# OPENAI_BASE_URL=https://relay.example.test/v1/v1\nOPENAI_API_KEY=sk-...\nANTHROPIC_API_KEY=<API_KEY>\nOPENAI_API_KEY=${OPENAI_API_KEY}\n',
    ],
    ['.env.example', 'OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxx\nOPENAI_API_KEY=sk-your-key-goes-here-0000\n'],
    [
      'a.ts',
      '// baseURL: "https://relay.example.test/v1/v1"\n/* new OpenAI({ baseURL: "https://x.test/v1/chat/completions" }) */\nconst docs = "see https://relay.example.test/v1/v1";\n',
    ],
    ['a.ts', 'const c = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });\n'],
    [
      'a.ts',
      "fetch('https://relay.example.test/v1/chat/completions', { method: 'POST' });\nconst cfg = { baseUrl: 'https://cdn.example.test' };\n",
    ],
    [
      'a.py',
      '"""Docs: OpenAI(base_url="https://relay.example.test/v1/v1")."""\nclient = OpenAI(base_url="http://127.0.0.1:8787/v1", api_key=os.environ["OPENAI_API_KEY"])\n',
    ],
    [
      'a.py',
      'requests.post("https://relay.example.test/v1/chat/completions")\nself.base_url = "https://relay.example.test"\n',
    ],
    [
      'config.toml',
      '# base_url = "https://relay.example.test/v1/v1"\n[model_providers.local]\nbase_url = "http://127.0.0.1:8787/v1"\n',
    ],
    ['a.yaml', 'homepage: https://relay.example.test/v1/v1\nbase_url: http://localhost:8787/v1\n'],
    ['package.json', '{"name": "x", "repository": {"url": "https://github.example.test/x"}}'],
    ['README.md', 'OPENAI_BASE_URL=https://relay.example.test/v1/v1\n'],
  ];
  for (const [fileName, text] of silent) {
    it(`${fileName}: ${JSON.stringify(text.slice(0, 50))}`, () => {
      expect(lintConfig(text, { fileName }, ctx)).toEqual([]);
    });
  }
});

describe('cost bounds', () => {
  it('skips files over the size cap and languages it does not check', () => {
    const big = 'OPENAI_BASE_URL=https://relay.example.test/v1/v1\n' + '#'.repeat(MAX_LINT_CHARS);
    expect(lintConfig(big, { fileName: '.env' })).toEqual([]);
    expect(
      lintConfig('OPENAI_BASE_URL=https://relay.example.test/v1/v1\n', {
        fileName: 'notes.txt',
        languageId: 'plaintext',
      }),
    ).toEqual([]);
  });

  it('language id decides when the name does not', () => {
    const diags = lintConfig('{"OPENAI_BASE_URL": "https://relay.example.test/v1/v1"}', {
      fileName: 'Untitled-1',
      languageId: 'jsonc',
    });
    expect(diags.map((d) => d.code)).toEqual([LINT_CODES.duplicateV1]);
  });

  it('caps the number of diagnostics per document', () => {
    const text = 'OPENAI_BASE_URL=https://relay.example.test/v1/v1\n'.repeat(500);
    expect(lintConfig(text, { fileName: '.env' })).toHaveLength(MAX_DIAGNOSTICS);
  });

  it('a large ordinary source file stays fast', () => {
    const line = "const x = { model: 'gpt-4o-mini', baseURL: process.env.OPENAI_BASE_URL }; // ok\n";
    const text = line.repeat(Math.floor((MAX_LINT_CHARS - 1) / line.length));
    const started = performance.now();
    lintConfig(text, { fileName: 'big.ts' }, { models: ['gpt-4o-mini'] });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
