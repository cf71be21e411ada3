// identifySession over what the real clients sent (test/fixtures/agent-wire/, captured from the
// pinned binaries through loopgate run and the simulator; docs/sessions.md says how), and a canary
// check that the fixtures hold no credential.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { identifySession, type ClientIdentity } from '../../rules/sessions/session-identity.js';
import { SECRET_PATTERNS } from '../../rules/redaction/secret-patterns.js';

interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Record<string, unknown>;
  expect: ClientIdentity;
}
interface WireFixture {
  client: string;
  version: string;
  what: string;
  requests: WireRequest[];
}

const dir = join(__dirname, '..', 'fixtures', 'agent-wire');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
const fixtures = files.map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8')) as WireFixture] as const);

describe('identifySession on the captured wire of each client', () => {
  it('has a fixture for every client it names', () => {
    const seen = new Set(fixtures.flatMap(([, f]) => f.requests.map((r) => r.expect.client)));
    for (const c of [
      'claude-code',
      'codex',
      'opencode',
      'qwen-code',
      'pi',
      'openai-sdk',
      'anthropic-sdk',
      'curl',
      'vscode',
    ])
      expect(seen, c).toContain(c);
  });

  for (const [file, f] of fixtures) {
    it(`${file}: ${f.what}`, () => {
      for (const [i, r] of f.requests.entries())
        expect(identifySession(r.headers, r.body), `${file} request ${i} (${r.method} ${r.path})`).toEqual(r.expect);
    });
  }

  it('keeps one session across a resumed Claude Code and a resumed Codex run, and apart between runs', () => {
    const keys = (file: string) =>
      fixtures.find(([n]) => n === file)![1].requests.map((r) => identifySession(r.headers, r.body).sessionKey);
    const [cc1, cc2] = keys('claude-code-resume.json');
    expect(cc1).toBeDefined();
    expect(cc2).toBe(cc1);
    const codex = keys('codex.json');
    expect(new Set(codex).size).toBe(1);
    expect(keys('claude-code.json')[0]).not.toBe(cc1);
  });

  it('tells Qwen Code in its Anthropic mode from Claude Code, though it sends a claude-cli User-Agent', () => {
    const qwen = fixtures.find(([n]) => n === 'qwen-code.json')![1].requests.find((r) => r.path.includes('messages'))!;
    expect(qwen.headers['user-agent']).toMatch(/^claude-cli\//);
    expect(identifySession(qwen.headers, qwen.body).client).toBe('qwen-code');
    // The header pass alone (no body) cannot tell: it says claude-code, with no session, so the body is read.
    expect(identifySession(qwen.headers, undefined)).toEqual({ client: 'claude-code' });
  });

  it('reads headers whatever the case of their names and takes the first of repeated values', () => {
    expect(
      identifySession(
        { 'User-Agent': 'claude-cli/2.1.332 (external, cli)', 'X-Claude-Code-Session-Id': ['s-1', 's-2'] },
        {},
      ),
    ).toEqual({ client: 'claude-code', sessionKey: 's-1' });
  });

  it('gives unknown for nothing to go by, and survives bodies of any shape', () => {
    expect(identifySession({}, undefined)).toEqual({ client: 'unknown' });
    for (const body of [
      { system: 5 },
      { messages: 'x' },
      { metadata: { user_id: '{not json' } },
      { client_metadata: 3 },
    ])
      expect(identifySession({ 'user-agent': 'claude-cli/1' }, body as Record<string, unknown>).client).toBe(
        'claude-code',
      );
    expect(identifySession({ originator: 'codex_exec', 'x-codex-turn-metadata': '[1]' }, undefined)).toEqual({
      client: 'codex',
    });
  });
});

describe('the wire fixtures (canary)', () => {
  it('hold no credential: every credential header is <removed>, and no secret shape appears anywhere', () => {
    for (const [file, f] of fixtures) {
      for (const r of f.requests) {
        for (const h of ['authorization', 'x-api-key', 'proxy-authorization', 'cookie'])
          if (h in r.headers) expect(r.headers[h], `${file} ${h}`).toBe('<removed>');
      }
      const text = readFileSync(join(dir, file), 'utf8');
      for (const { name, pattern } of SECRET_PATTERNS) expect(text.match(pattern), `${file}: ${name}`).toBeNull();
      // Loopgate's local token and a run credential, the simulator's demo keys, a bearer value.
      expect(text, file).not.toMatch(/lg-local-|sk-[A-Za-z0-9_-]{8,}|Bearer\s+\S/);
    }
  });
});
