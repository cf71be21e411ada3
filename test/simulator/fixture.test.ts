import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEMO_KEY,
  FixtureError,
  defaultFixture,
  loadFixture,
  startSimulator,
  validateFixture,
} from '../../simulator/index.js';
import { openai } from './helpers.js';

const good = {
  groups: { g: { protocols: ['chat'], models: ['m1', { id: 'm2', owned_by: 'acme' }] } },
  keys: [{ key: 'sk-demo-custom-000000000000000000000', group: 'g', status: 'active', balance: 5 }],
};

describe('fixture', () => {
  it('default fixture has the demo groups and keys the team relies on', () => {
    expect(Object.keys(defaultFixture.groups)).toEqual(['default', 'claude', 'chat-only']);
    expect(defaultFixture.groups['chat-only']!.protocols).toEqual(['chat']);
    expect(DEMO_KEY).toBe(defaultFixture.keys[0]!.key);
    for (const k of defaultFixture.keys) {
      expect(k.key.startsWith('sk-demo-')).toBe(true);
      expect(k.key.length).toBeGreaterThanOrEqual(24);
    }
    const statuses = defaultFixture.keys.map((k) => k.status);
    expect(statuses).toContain('disabled');
    expect(statuses).toContain('restricted');
    expect(defaultFixture.keys.some((k) => k.balance <= 0)).toBe(true);
    expect(defaultFixture.keys.some((k) => k.models?.length === 1)).toBe(true);
    expect(defaultFixture.keys.some((k) => k.rpm === 2)).toBe(true);
  });

  it('rejects bad fixtures with a message naming the field', () => {
    const cases: Array<[unknown, RegExp]> = [
      [[], /root/],
      [{ groups: {}, keys: [] }, /groups/],
      [{ groups: { g: { protocols: ['chat', 'grpc'], models: [] } }, keys: [] }, /groups\.g\.protocols\[1\].*grpc/],
      [{ groups: { g: { protocols: ['chat'], models: [3] } }, keys: [] }, /groups\.g\.models\[0\]/],
      [{ ...good, keys: [{ ...good.keys[0], group: 'nope' }] }, /keys\[0\]\.group/],
      [{ ...good, keys: [{ ...good.keys[0], status: 'paused' }] }, /keys\[0\]\.status/],
      [{ ...good, keys: [{ ...good.keys[0], balance: '5' }] }, /keys\[0\]\.balance/],
      [{ ...good, keys: [{ ...good.keys[0], rpm: 0 }] }, /keys\[0\]\.rpm/],
      [{ ...good, keys: [good.keys[0], good.keys[0]] }, /keys\[1\]\.key.*duplicate/],
    ];
    for (const [data, msg] of cases) {
      expect(() => validateFixture(data)).toThrow(FixtureError);
      expect(() => validateFixture(data)).toThrow(msg);
    }
  });

  it('loads a fixture file, and names the file when it is missing or not JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lg-fixture-'));
    const file = join(dir, 'f.json');
    writeFileSync(file, JSON.stringify(good));
    expect(loadFixture(file).keys[0]!.key).toBe(good.keys[0]!.key);
    const sim = await startSimulator({ port: 0, fixture: file });
    try {
      const page = await openai(sim, good.keys[0]!.key).models.list();
      expect(page.data.map((m) => [m.id, m.owned_by])).toEqual([
        ['m1', 'custom'],
        ['m2', 'acme'],
      ]);
    } finally {
      await sim.close();
    }
    expect(() => loadFixture(join(dir, 'missing.json'))).toThrow(/missing\.json.*ENOENT/);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"groups": ');
    expect(() => loadFixture(broken)).toThrow(/broken\.json is not valid JSON/);
  });
});
