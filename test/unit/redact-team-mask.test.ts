import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTeamMask } from '../../rules/redaction/team-mask.js';

const m = createTeamMask({ hashKey: new Uint8Array(32).fill(3) });

describe('team mask', () => {
  it('masks org and project ids with stable tags', () => {
    const out = m.string('org-AbCdEf123456 and proj_ZyXw98765432 and org-AbCdEf123456');
    expect(out).toMatch(/^\[ORG:[0-9a-f]{4}\] and \[PROJECT:[0-9a-f]{4}\] and \[ORG:[0-9a-f]{4}\]$/);
    const [a, , c] = out.split(' and ');
    expect(a).toBe(c);
    expect(out).not.toContain('AbCdEf');
  });

  it('masks account headers whole, in any casing', () => {
    const out = m.headers({
      'OpenAI-Organization': 'org-AbCdEf123456',
      'openai-project': 'proj_ZyXw98765432',
      'Anthropic-Organization-Id': '3f2a9c1e-0000-4000-8000-123456789abc',
      'content-type': 'application/json',
    });
    expect(out['OpenAI-Organization']).toMatch(/^\[MASKED:[0-9a-f]{4}\]$/);
    expect(out['openai-project']).toMatch(/^\[MASKED:[0-9a-f]{4}\]$/);
    expect(out['Anthropic-Organization-Id']).toMatch(/^\[MASKED:[0-9a-f]{4}\]$/);
    expect(out['content-type']).toBe('application/json');
  });

  it.each([
    ['/home/alice/work/app.ts', '~/work/app.ts'],
    ['/Users/bob.smith/x', '~/x'],
    ['/Users/bob/Library', '~/Library'],
    ['C:\\Users\\carol\\proj\\a.ts', '~\\proj\\a.ts'],
    ['"C:\\\\Users\\\\dave\\\\a.ts"', '"~\\\\a.ts"'],
    ['c:/Users/erin/a.ts', '~/a.ts'],
    ['at load (/home/frank/node_modules/x.js:1:2)', 'at load (~/node_modules/x.js:1:2)'],
  ])('turns the home directory in %s into ~', (input, expected) => {
    expect(m.string(input)).toBe(expected);
  });

  it('masks e-mail addresses', () => {
    expect(m.string('owner: jane.doe@example.com')).toMatch(/^owner: \[EMAIL:[0-9a-f]{4}\]$/);
  });

  it('leaves ordinary traffic alone', () => {
    for (const s of [
      '/v1/chat/completions',
      'https://api.example.com/home/index',
      'gpt-4o-mini',
      'organization settings',
      '@anthropic-ai/sdk',
      'req_2025abc',
    ]) {
      expect(m.string(s)).toBe(s);
    }
  });

  it('is idempotent and deep', () => {
    const v = { path: '/home/alice/x', nested: [{ org: 'org-AbCdEf123456' }] };
    const once = m.value(v);
    expect(once).toEqual({ path: '~/x', nested: [{ org: expect.stringMatching(/^\[ORG:/) }] });
    expect(m.value(once)).toEqual(once);
    const h = m.headers({ 'OpenAI-Organization': 'org-AbCdEf123456' });
    expect(m.headers(h)).toEqual(h);
  });

  it('is idempotent on arbitrary text (property)', () => {
    const fragments = fc
      .array(
        fc.constantFrom(
          'org-',
          'proj_',
          '/home/',
          '/Users/',
          'C:\\Users\\',
          'c:/Users/',
          '\\',
          '/',
          '~',
          '@',
          'x.com',
          'alice',
          'AbCdEf123456',
          ' ',
          '"',
        ),
        { maxLength: 12 },
      )
      .map((p) => p.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fragments), (s) => {
        const once = m.string(s);
        expect(m.string(once)).toBe(once);
      }),
      { numRuns: 2000 },
    );
  });
});
