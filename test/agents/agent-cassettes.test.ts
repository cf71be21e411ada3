// The committed agent recordings (test/fixtures/agent-cassettes/, agent-tape.ts) hold no secret: every file,
// cassette and client tape alike, is searched for every key shape the redactor knows, a bearer value, the
// simulator's demo keys and the run canaries' prefixes (the recorder already refused the run's own keys and token
// in every encoding). Also: the recordings stay small, so a first clone and a review stay cheap.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SECRET_PATTERNS } from '../../rules/redaction/secret-patterns.js';
import { DEMO_KEYS } from '../../simulator/index.js';
import { AGENT_CASSETTES } from './agent-tape.js';

/** Every file under the folder, two levels down at most (suite / proxy / exchange). */
function files(dir: string, depth = 2): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return depth > 0 ? files(path, depth - 1) : [];
    return [path];
  });
}

const all = files(AGENT_CASSETTES);

describe('the agent recordings the first tier replays', () => {
  it('are there: a client tape and at least one cassette per suite', () => {
    const suites = readdirSync(AGENT_CASSETTES);
    expect(suites.length).toBeGreaterThan(0);
    for (const s of suites) {
      expect(
        all.some((f) => f === join(AGENT_CASSETTES, s, 'client.json')),
        s,
      ).toBe(true);
      expect(
        all.some((f) => relative(join(AGENT_CASSETTES, s), f).includes('/')),
        s,
      ).toBe(true);
    }
  });

  it('hold no key, token or bearer value', () => {
    for (const f of all) {
      const text = readFileSync(f, 'utf8');
      const file = relative(AGENT_CASSETTES, f);
      for (const { name, pattern } of SECRET_PATTERNS) expect(text.match(pattern), `${file}: ${name}`).toBeNull();
      for (const { key } of DEMO_KEYS) expect(text.includes(key), `${file}: a demo key`).toBe(false);
      expect(text, file).not.toMatch(/sk-canary-|lg-local-canary-|lg-local-[A-Za-z0-9]{8,}/);
    }
  });
});
