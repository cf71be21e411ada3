// Review round 2: quick fixes that produced broken files, fixes the target tool
// cannot use, false positives, keys quoted in messages, template names, and cost.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  applyEdits,
  fileKind,
  isDotenvTemplate,
  LINT_CODES,
  lintConfig,
  MAX_MODEL_DIAGNOSTICS,
  suggestModels,
  type LintCode,
  type LintContext,
  type LintDiagnostic,
} from '../../rules/project/config-lint/index.js';

// Shaped like keys to the scanner; not real ones.
const KEY = 'sk-Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY';
const ANT_KEY = 'sk-ant-api03-Q7w2Er9Ty4Ui1Op8As5Df';
const GOOGLE_KEY = 'AIzaSyQ7w2Er9Ty4Ui1Op8As5DfGh3Jk6Lz0Xc';

function only(text: string, fileName: string, code: LintCode, ctx: LintContext = {}): LintDiagnostic {
  const hits = lintConfig(text, { fileName }, ctx).filter((d) => d.code === code);
  expect(hits, `${code} in ${fileName}`).toHaveLength(1);
  return hits[0]!;
}

/** The preferred fix applied to the text. */
function fixed(text: string, fileName: string, code: LintCode = LINT_CODES.apiKeyInFile): string {
  const d = only(text, fileName, code);
  const fix = d.fixes.find((f) => f.isPreferred) ?? d.fixes[0];
  expect(fix, `a fix for ${code} in ${fileName}`).toBeDefined();
  return applyEdits(text, fix!.edits);
}

const hasPython = spawnSync('python3', ['--version']).status === 0;

/** Compiles Python source with the real interpreter (no run): a fix must leave valid Python. */
function pythonCompiles(source: string): boolean {
  const r = spawnSync('python3', ['-c', 'import sys; compile(sys.stdin.read(), "fixed.py", "exec")'], {
    input: source,
    encoding: 'utf8',
  });
  return r.status === 0;
}

describe('Python key fix produces code that runs', () => {
  it('takes the string prefix with the literal: r"…", f"…", b"…"', () => {
    expect(fixed(`import os\nclient = OpenAI(api_key=r"${KEY}")\n`, 'a.py')).toBe(
      'import os\nclient = OpenAI(api_key=os.environ["OPENAI_API_KEY"])\n',
    );
    expect(fixed(`import os\nKEY = f"${KEY}"\n`, 'a.py')).toBe('import os\nKEY = os.environ["OPENAI_API_KEY"]\n');
    expect(fixed(`import os\nKEY = Rb'${KEY}'\n`, 'a.py')).toBe(
      'import os\nKEY = os.environ["OPENAI_API_KEY"].encode()\n',
    );
    // An identifier ending in r/f is not a prefix.
    expect(fixed(`import os\nx = [buf, "${KEY}"]\n`, 'a.py')).toBe(
      'import os\nx = [buf, os.environ["OPENAI_API_KEY"]]\n',
    );
  });

  it('inside a longer string: an existing f-string keeps its prefix, r"…" becomes rf"…", u"…" becomes f"…"', () => {
    expect(fixed(`import os\nH = f"Bearer ${KEY} for {user}"\n`, 'a.py')).toBe(
      `import os\nH = f"Bearer {os.environ['OPENAI_API_KEY']} for {user}"\n`,
    );
    expect(fixed(`import os\nH = r'Bearer ${KEY}'\n`, 'a.py')).toBe(
      `import os\nH = rf'Bearer {os.environ["OPENAI_API_KEY"]}'\n`,
    );
    expect(fixed(`import os\nH = u"Bearer ${KEY}"\n`, 'a.py')).toBe(
      `import os\nH = f"Bearer {os.environ['OPENAI_API_KEY']}"\n`,
    );
  });

  it('`import os` goes after the docstring AND the __future__ imports, across blank and comment lines', () => {
    const text = `# -*- coding: utf-8 -*-\n"""\nModule doc.\n"""\n\n# typing\nfrom __future__ import annotations\nKEY = "${KEY}"\n`;
    expect(fixed(text, 'a.py')).toBe(
      `# -*- coding: utf-8 -*-\n"""\nModule doc.\n"""\n\n# typing\nfrom __future__ import annotations\nimport os\nKEY = os.environ["OPENAI_API_KEY"]\n`,
    );
    const multi = `"""Doc."""\nfrom __future__ import (\n    annotations,\n    division,\n)\n\nKEY = "${KEY}"\n`;
    expect(fixed(multi, 'a.py')).toBe(
      `"""Doc."""\nfrom __future__ import (\n    annotations,\n    division,\n)\nimport os\n\nKEY = os.environ["OPENAI_API_KEY"]\n`,
    );
  });

  it('keeps the encoding line within the first two lines, and CRLF files CRLF', () => {
    expect(fixed(`# Copyright\n# -*- coding: latin-1 -*-\nKEY = "${KEY}"\n`, 'a.py')).toBe(
      `# Copyright\n# -*- coding: latin-1 -*-\nimport os\nKEY = os.environ["OPENAI_API_KEY"]\n`,
    );
    expect(fixed(`"""Doc."""\r\nKEY = "${KEY}"\r\n`, 'a.py')).toBe(
      `"""Doc."""\r\nimport os\r\nKEY = os.environ["OPENAI_API_KEY"]\r\n`,
    );
  });

  it('only a top-level `import os` that binds `os` counts as present', () => {
    const inFunction = `def make():\n    import os\n    return 1\nKEY = "${KEY}"\n`;
    expect(fixed(inFunction, 'a.py')).toBe(
      `import os\ndef make():\n    import os\n    return 1\nKEY = os.environ["OPENAI_API_KEY"]\n`,
    );
    expect(fixed(`from os import getenv\nKEY = "${KEY}"\n`, 'a.py')).toBe(
      `import os\nfrom os import getenv\nKEY = os.environ["OPENAI_API_KEY"]\n`,
    );
    expect(fixed(`import os as _os\nKEY = "${KEY}"\n`, 'a.py')).toMatch(/^import os\nimport os as _os\n/);
    expect(fixed(`"""import os"""\nKEY = "${KEY}"\n`, 'a.py')).toBe(
      `"""import os"""\nimport os\nKEY = os.environ["OPENAI_API_KEY"]\n`,
    );
    // These do bind `os`: no second import.
    expect(fixed(`import os.path\nKEY = "${KEY}"\n`, 'a.py')).toBe(
      `import os.path\nKEY = os.environ["OPENAI_API_KEY"]\n`,
    );
    expect(fixed(`import json, os  # std\nKEY = "${KEY}"\n`, 'a.py')).toBe(
      `import json, os  # std\nKEY = os.environ["OPENAI_API_KEY"]\n`,
    );
  });

  it.runIf(hasPython)(
    'every fixed snippet compiles with python3',
    () => {
      const snippets = [
        `from openai import OpenAI\nclient = OpenAI(api_key=r"${KEY}")\n`,
        `KEY = f"${KEY}"\n`,
        `X = "Bearer ${KEY}"\n`,
        `X = f'Bearer ${KEY} {1}'\n`,
        `X = r"Bearer ${KEY}"\n`,
        `X = b"${KEY}"\n`,
        `# -*- coding: utf-8 -*-\n"""\nModule doc.\n"""\n\nfrom __future__ import annotations\nKEY = "${KEY}"\n`,
        `#!/usr/bin/env python3\n"""Doc."""\nfrom __future__ import (\n    annotations,\n)\nKEY = "${KEY}"\n`,
        `from os import getenv\ndef f():\n    import os\nKEY = "${KEY}"\nprint(os.environ)\n`,
      ];
      for (const s of snippets) {
        expect(pythonCompiles(s), s).toBe(true);
        const out = fixed(s, 'a.py');
        expect(out).not.toContain(KEY);
        expect(pythonCompiles(out), out).toBe(true);
      }
      // 18 python3 starts (a pyenv shim here, ~1 s each under load): a deadline, not a speed check.
    },
    90_000,
  );
});

describe('key fixes the target tool can use', () => {
  it('Claude Code settings.json: the env entry is removed (no literal ${X}), the JSON stays valid', () => {
    const text = `{\n  "env": {\n    "ANTHROPIC_BASE_URL": "http://127.0.0.1:8787",\n    "ANTHROPIC_AUTH_TOKEN": "${ANT_KEY}"\n  },\n  "model": "opus"\n}\n`;
    const d = only(text, 'settings.json', LINT_CODES.apiKeyInFile);
    expect(d.message).toContain('integrated terminal');
    expect(d.message).toContain('Loopgate: Set API Key');
    expect(d.fixes.map((f) => f.title)).toEqual(['Remove this entry (the key belongs in Loopgate: Set API Key)']);
    const out = applyEdits(text, d.fixes[0]!.edits);
    expect(out).toBe('{\n  "env": {\n    "ANTHROPIC_BASE_URL": "http://127.0.0.1:8787"\n  },\n  "model": "opus"\n}\n');
    expect(JSON.parse(out)).toEqual({ env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787' }, model: 'opus' });
  });

  it('JSON: first, middle, only member and a header value all leave valid JSON', () => {
    const cases: Array<[string, unknown]> = [
      [`{\n  "OPENAI_API_KEY": "${KEY}",\n  "b": 1\n}\n`, { b: 1 }],
      [`{"a": 1, "apiKey": "${KEY}", "b": 2}`, { a: 1, b: 2 }],
      [`{"env": {"ANTHROPIC_AUTH_TOKEN": "${ANT_KEY}"}}`, { env: {} }],
      [`{"headers": {"Authorization": "Bearer ${KEY}"}}\n`, { headers: {} }],
    ];
    for (const [text, parsed] of cases) {
      const out = fixed(text, 'config.json');
      expect(out).not.toContain('${');
      expect(JSON.parse(out), text).toEqual(parsed);
    }
    // JSONC: a trailing comma and a comment stay as they were.
    expect(fixed(`{\n  "a": 1,\n  "apiKey": "${KEY}", // prod\n}\n`, 'settings.json')).toBe('{\n  "a": 1,\n}\n');
  });

  it('JSON: a key in an array gets no text edit, only the Set API Key command', () => {
    const d = only(`{"args": ["--api-key", "${KEY}"]}`, 'mcp.json', LINT_CODES.apiKeyInFile);
    expect(d.fixes).toEqual([]);
    expect(d.commands.map((c) => c.command)).toEqual(['loopgate.setApiKey']);
  });

  it('Codex config.toml: experimental_bearer_token becomes env_key = "OPENAI_API_KEY"', () => {
    const text = `model_provider = "relay"\n\n[model_providers.relay]\nname = "Relay"\nbase_url = "https://relay.example.test/v1"\nexperimental_bearer_token = "${KEY}"\nwire_api = "responses"\n`;
    const d = only(text, 'config.toml', LINT_CODES.apiKeyInFile);
    expect(d.message).toContain('env_key');
    expect(applyEdits(text, d.fixes[0]!.edits)).toBe(
      'model_provider = "relay"\n\n[model_providers.relay]\nname = "Relay"\nbase_url = "https://relay.example.test/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n',
    );
    // The table already names its variable: just drop the token.
    const withEnv = `[model_providers.relay]\nenv_key = "RELAY_KEY"\nexperimental_bearer_token = "${KEY}"\n`;
    expect(fixed(withEnv, 'config.toml')).toBe('[model_providers.relay]\nenv_key = "RELAY_KEY"\n');
  });

  it('TOML: any other key line is removed, not replaced by a ${X} TOML does not expand', () => {
    expect(fixed(`[llm]\napi_key = "${KEY}"  # prod\nmodel = "x"\n`, 'app.toml')).toBe('[llm]\nmodel = "x"\n');
  });

  it('docker-compose keeps ${X} (Compose interpolates it), named after the list item', () => {
    expect(fixed(`services:\n  app:\n    environment:\n      - OPENAI_API_KEY=${KEY}\n`, 'compose.yaml')).toBe(
      'services:\n  app:\n    environment:\n      - OPENAI_API_KEY=${OPENAI_API_KEY}\n',
    );
    expect(
      fixed(
        `services:\n  app:\n    environment:\n      ANTHROPIC_AUTH_TOKEN: "${ANT_KEY}"\n`,
        'docker-compose.prod.yml',
      ),
    ).toContain('ANTHROPIC_AUTH_TOKEN: "${ANTHROPIC_AUTH_TOKEN}"');
  });

  it('other YAML gets no ${X} text edit (nothing would expand it), only the command', () => {
    const d = only(`llm:\n  api_key: ${KEY}\n`, 'app.yaml', LINT_CODES.apiKeyInFile);
    expect(d.fixes).toEqual([]);
    expect(d.commands.map((c) => c.command)).toEqual(['loopgate.setApiKey']);
  });
});

describe('base-URL false positives', () => {
  it('TOML base_url outside a Codex provider table is not an OpenAI base (Zola, pytest-base-url)', () => {
    expect(
      lintConfig('# The URL the site will be built for\nbase_url = "https://mywebsite.com"\ntitle = "My site"\n', {
        fileName: 'config.toml',
      }),
    ).toEqual([]);
    expect(
      lintConfig('[tool.pytest.ini_options]\nbase_url = "https://staging.example.com"\naddopts = "-ra"\n', {
        fileName: 'pyproject.toml',
      }),
    ).toEqual([]);
    // Even with "openai" mentioned next to it.
    expect(
      lintConfig(
        '[project]\ndependencies = ["openai>=1"]\n[tool.pytest.ini_options]\nbase_url = "https://staging.example.com"\n',
        { fileName: 'pyproject.toml' },
      ),
    ).toEqual([]);
  });

  it('Codex provider tables are still checked, inline ones too', () => {
    expect(
      fixed(
        '[model_providers.relay]\nname = "Relay"\nbase_url = "https://relay.example.test"\n',
        'config.toml',
        LINT_CODES.missingV1,
      ),
    ).toContain('base_url = "https://relay.example.test/v1"');
    expect(
      fixed(
        'model_providers.relay = { name = "Relay", base_url = "https://relay.example.test/v1/v1" }\n',
        'config.toml',
        LINT_CODES.duplicateV1,
      ),
    ).toContain('base_url = "https://relay.example.test/v1" }');
    expect(
      fixed(
        '[model_providers]\nrelay = { base_url = "https://relay.example.test" }\n',
        'config.toml',
        LINT_CODES.missingV1,
      ),
    ).toContain('/v1"');
  });

  it('Continue apiBase for an Anthropic model is a /v1 base: no "strip /v1"', () => {
    const text =
      '{\n  "models": [\n    {\n      "title": "Claude",\n      "provider": "anthropic",\n      "model": "claude-sonnet-4-6",\n      "apiBase": "https://api.example.com/v1"\n    }\n  ]\n}\n';
    expect(lintConfig(text, { fileName: 'config.json' })).toEqual([]);
    expect(only(text.replace('/v1"', '/v1/v1"'), 'config.json', LINT_CODES.duplicateV1)).toBeDefined();
    // LiteLLM's snake_case api_base for Anthropic appends /v1/messages itself: still checked as a prefix.
    const litellm =
      'model_list:\n  - model_name: claude\n    litellm_params:\n      model: anthropic/claude-sonnet-4-6\n      api_base: https://api.example.com/v1\n';
    expect(only(litellm, 'litellm.yaml', LINT_CODES.anthropicEndsV1)).toBeDefined();
  });

  it('no "add /v1" when the path carries its own version', () => {
    const urls = [
      'https://generativelanguage.googleapis.com/v1beta/openai/',
      'https://open.bigmodel.cn/api/paas/v4',
      'https://gateway.ai.cloudflare.com/v1/acct/gw/openai',
      'https://example.test/api/v1alpha',
      'https://myres.openai.azure.com/openai/deployments/gpt4',
    ];
    for (const url of urls) expect(lintConfig(`OPENAI_BASE_URL=${url}\n`, { fileName: '.env' }), url).toEqual([]);
    // Still flagged: no version anywhere, or a version-ish word that is not a segment.
    expect(only('OPENAI_BASE_URL=https://relay.example.test\n', '.env', LINT_CODES.missingV1)).toBeDefined();
    expect(only('OPENAI_BASE_URL=https://relay.example.test/v1x-proxy\n', '.env', LINT_CODES.missingV1)).toBeDefined();
  });
});

describe('a key is never quoted', () => {
  const ctx: LintContext = { models: ['gpt-4o-mini', 'gpt-4.1'], proxyUrl: 'http://127.0.0.1:8787' };

  it('a key pasted into a model field is reported by the key rule, not the model rule', () => {
    for (const [fileName, text] of [
      ['.env', `OPENAI_MODEL=${KEY}\n`],
      ['settings.json', `{"model": "${KEY}"}`],
      ['c.toml', `model = "${KEY}"\n`],
      ['app.py', `client.responses.create(model="${KEY}")\n`],
    ] as const) {
      expect(
        lintConfig(text, { fileName }, ctx).map((d) => d.code),
        fileName,
      ).toEqual([LINT_CODES.apiKeyInFile]);
    }
    // An ordinary wrong ID is still reported.
    expect(only('OPENAI_MODEL=gpt-4o-mni\n', '.env', LINT_CODES.unknownModel, ctx)).toBeDefined();
  });

  it('no message, fix title or command title of any rule contains a planted key', () => {
    const keys = [KEY, ANT_KEY, GOOGLE_KEY];
    const files: Array<[string, (k: string) => string]> = [
      [
        '.env',
        (k) =>
          `OPENAI_API_KEY=${k}\nOPENAI_MODEL=${k}\nOPENAI_BASE_URL=https://relay.example.test/${k}/v1/v1\nANTHROPIC_BASE_URL=https://relay.example.test/${k}/v1\n`,
      ],
      ['.env.example', (k) => `OPENAI_API_KEY=${k}\nOPENAI_BASE_URL=https://relay.example.test/v1#${k}\n`],
      [
        '.env',
        (k) =>
          `OPENAI_BASE_URL=http://${k}.relay.example.test?key=${k}\nOPENAI_API_BASE=https://relay.example.test/${k}/chat/completions\n`,
      ],
      [
        'settings.json',
        (k) =>
          `{"env": {"ANTHROPIC_AUTH_TOKEN": "${k}", "OPENAI_BASE_URL": "https://relay.example.test/${k}"}, "model": "${k}"}`,
      ],
      [
        'config.toml',
        (k) =>
          `model = "${k}"\n[model_providers.r]\nbase_url = "https://relay.example.test/${k}"\nexperimental_bearer_token = "${k}"\n`,
      ],
      [
        'compose.yaml',
        (k) =>
          `services:\n  a:\n    environment:\n      - OPENAI_API_KEY=${k}\n      - OPENAI_BASE_URL=https://relay.example.test/${k}/v1/v1\n`,
      ],
      ['a.yaml', (k) => `model: ${k}\napi_key: ${k}\n`],
      [
        'a.ts',
        (k) =>
          `const c = new OpenAI({ apiKey: "${k}", baseURL: "https://relay.example.test/${k}/responses" });\nawait c.responses.create({ model: "${k}" });\n// old: ${k}\n`,
      ],
      [
        'a.py',
        (k) =>
          `c = OpenAI(api_key=f"{k}", base_url="https://relay.example.test/${k}")\nh = {"auth": "Bearer ${k}"}\nr = c.responses.create(model="${k}")\n`,
      ],
    ];
    let checked = 0;
    for (const key of keys) {
      for (const [fileName, make] of files) {
        const diags = lintConfig(make(key), { fileName }, ctx);
        expect(diags.length, fileName).toBeGreaterThan(0);
        for (const d of diags) {
          const shown = JSON.stringify([d.message, d.fixes.map((f) => f.title), d.commands.map((c) => c.title)]);
          expect(shown, `${d.code} in ${fileName}`).not.toContain(key.slice(-20));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
  });
});

describe('dotenv templates', () => {
  it('committed templates, whatever the order of the name parts', () => {
    for (const name of [
      '.env.example',
      '.env.local.example',
      '.env.production.example',
      'env.example',
      '.env.sample',
      'example.env',
      'app.example.env',
      '.env.dist',
      '.env.defaults',
    ]) {
      expect(isDotenvTemplate(name), name).toBe(true);
      expect(fileKind({ fileName: `/p/${name}` }), name).toBe('dotenv');
    }
    for (const name of ['.env', '.env.local', '.env.production', '.env.example.local', 'prod.env'])
      expect(isDotenvTemplate(name), name).toBe(false);
  });

  it('.env.local.example and env.example get the warning and the removal fix', () => {
    for (const name of ['.env.local.example', '.env.production.example', 'env.example']) {
      const d = only(`OPENAI_API_KEY=${KEY}\n`, name, LINT_CODES.apiKeyInFile);
      expect(d.severity, name).toBe('warning');
      expect(applyEdits(`OPENAI_API_KEY=${KEY}\n`, d.fixes[0]!.edits)).toBe('OPENAI_API_KEY=\n');
    }
    expect(only(`OPENAI_API_KEY=${KEY}\n`, '.env.local', LINT_CODES.apiKeyInFile).severity).toBe('information');
  });
});

describe('model suggestions stay cheap on long lists', () => {
  const models = Array.from({ length: 10_000 }, (_, i) => `provider${i % 50}/model-${i}-instruct`).concat([
    'gpt-4o-mini',
    'gpt-4o-mini-2024-07-18',
  ]);
  const env = Array.from({ length: 150 }, (_, i) => `OPENAI_MODEL=gpt-typo-${i}-mini\n`).join('');

  it(`reports at most ${MAX_MODEL_DIAGNOSTICS} unknown IDs per document`, () => {
    const diags = lintConfig(env, { fileName: '.env' }, { models });
    expect(diags.filter((d) => d.code === LINT_CODES.unknownModel)).toHaveLength(MAX_MODEL_DIAGNOSTICS);
  });

  it('150 unknown IDs against 10,000 models lint well under a second', () => {
    const started = performance.now();
    lintConfig(env, { fileName: '.env' }, { models });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('the length prefilter keeps prefix/suffix relatives and close typos', () => {
    expect(suggestModels('gpt-4o', models)).toEqual(['gpt-4o-mini', 'gpt-4o-mini-2024-07-18']);
    expect(suggestModels('gpt-4o-mnii', models)).toEqual(['gpt-4o-mini']);
    expect(suggestModels('GPT-4O-MINI', models)).toEqual(['gpt-4o-mini']);
    expect(suggestModels('provider3/model-53-instrct', models)[0]).toBe('provider3/model-53-instruct');
  });
});
