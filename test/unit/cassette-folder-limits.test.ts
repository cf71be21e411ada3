// The cassette store's folder limits on the real file system (issue 39 H-5a), as Save as
// Fixture uses them (its VS Code command is run in test/e2e): its default `cassettes/` in the
// workspace may be a link within the workspace, never out of it; a link that leads nowhere, or a
// name on the way that is a file, is refused by name.
import { mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CASSETTE_MARK, CASSETTE_VERSION, type CassetteExchange } from '../../core/cassette.js';
import { writeExchange } from '../../storage/cassettes/store.js';
import { matchKey } from '../../rules/cassettes/cassette-match.js';

const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const exchange: CassetteExchange = {
  [CASSETTE_MARK]: CASSETTE_VERSION,
  recorded: '2026-11-28T04:00:00.000Z',
  key: matchKey('POST', '/v1/chat/completions', body),
  request: { method: 'POST', path: '/v1/chat/completions', headers: {}, body },
  response: { status: 200, headers: {}, body: { ok: true } },
};

function workspace(): { root: string; outside: string } {
  const top = mkdtempSync(join(tmpdir(), 'lg-folder-limits-'));
  const root = join(top, 'workspace');
  const outside = join(top, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  return { root, outside };
}

describe('cassette folder limits (Save as Fixture)', () => {
  it('the default cassettes/ may be a link inside the workspace: written there', () => {
    const { root } = workspace();
    mkdirSync(join(root, 'shared', 'cassettes'), { recursive: true });
    symlinkSync(join(root, 'shared', 'cassettes'), join(root, 'cassettes'));
    const file = writeExchange(join(root, 'cassettes'), 1, exchange, { base: root, within: root });
    expect(file.startsWith(join(root, 'shared', 'cassettes'))).toBe(true);
    expect(readdirSync(join(root, 'shared', 'cassettes'))).toHaveLength(1);
  });

  it('a default cassettes/ that links out of the workspace is refused saying where it points; nothing is written', () => {
    const { root, outside } = workspace();
    symlinkSync(outside, join(root, 'cassettes'));
    expect(() => writeExchange(join(root, 'cassettes'), 1, exchange, { base: root, within: root })).toThrow(
      `cassettes is a link to ${outside}`,
    );
    expect(readdirSync(outside)).toEqual([]);
  });

  it('a folder chosen by name may not be a link even inside the workspace; a dangling link and a file are named', () => {
    const { root } = workspace();
    mkdirSync(join(root, 'real'));
    symlinkSync(join(root, 'real'), join(root, 'chosen'));
    expect(() => writeExchange(join(root, 'chosen'), 1, exchange, { base: root })).toThrow(
      /chosen is a link to .*real.*outside chosen/,
    );
    symlinkSync(join(root, 'gone'), join(root, 'dangling'));
    expect(() => writeExchange(join(root, 'dangling'), 1, exchange, { base: root })).toThrow(
      /dangling is a link to .*gone, which does not exist/,
    );
    writeFileSync(join(root, 'a-file'), 'x');
    expect(() => writeExchange(join(root, 'a-file', 'sub'), 1, exchange, { base: root })).toThrow(
      'a-file is not a folder',
    );
    expect(readdirSync(join(root, 'real'))).toEqual([]);
  });
});
