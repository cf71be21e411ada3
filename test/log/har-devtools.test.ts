// "Loads in Chrome DevTools": parse our HAR with DevTools' own HAR parser.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toHar } from '../../storage/log/index.js';
import { CHROMIUM_PAK, loadDevToolsHarRoot } from './devtools-har.js';
import { record } from './records.js';

// Chromium is installed by `npm test`'s provisioning (scripts/provision-e2e.mjs); without it, e.g. under test:fast on a bare machine, this is skipped.
describe.skipIf(!existsSync(CHROMIUM_PAK))('HAR in Chrome DevTools', () => {
  it('parses a mixed session (streaming, error, rewrite, abort) with DevTools HARRoot, and rejects a broken one', async () => {
    const HARRoot = await loadDevToolsHarRoot();
    expect(HARRoot, 'DevTools HAR module not found in resources.pak').not.toBeNull();
    const har = toHar(
      [
        record({ method: 'GET', path: '/v1/models' }),
        record({
          path: '/v1/v1/chat/completions?beta=true',
          rewrites: ['/v1/v1/chat/completions -> /v1/chat/completions (duplicated /v1)'],
          stream: true,
          requestHeaders: { 'content-type': 'application/json', authorization: '[REDACTED:1a2b]' },
          responseHeaders: { 'content-type': 'text/event-stream' },
          requestBody: '{"stream":true}',
          responseBody: 'data: [DONE]\n\n',
        }),
        record({ status: 503, errorCode: 'model_not_found', diagnosis: 'model-not-in-group', ttfbMs: undefined }),
        record({ status: 0, clientAborted: true, path: 'odd path?x=a b' }),
      ],
      { rules: [], team: true },
    ) as { log: { entries: Array<Record<string, any>> } };
    const root = new HARRoot!(har);
    expect(root.log.entries.map((e) => [e.request.url, e.response.status])).toEqual([
      ['http://127.0.0.1/v1/models', 200],
      ['http://127.0.0.1/v1/v1/chat/completions?beta=true', 200],
      ['http://127.0.0.1/v1/chat/completions', 503],
      ['http://127.0.0.1/odd%20path?x=a%20b', 0],
    ]);
    const broken = structuredClone(har);
    broken.log.entries[1].timings.wait = 'soon';
    expect(() => new HARRoot!(broken)).toThrow(/NaN/);
  });
});
