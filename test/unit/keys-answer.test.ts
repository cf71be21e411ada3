// The Model Explorer's routes come from the proxy's own rule on the proxy's
// own state (/_loopgate/keys: lists, --bridge mode, what it learned from 404
// endpoint_not_supported answers), not from the editor's settings.
import { describe, expect, it } from 'vitest';
import { parseKeyModels } from '../../extension/views/explorer-list.js';

const body = (extra: Record<string, unknown>) =>
  JSON.stringify({
    keys: [
      {
        name: 'default',
        failure: null,
        models: [{ id: 'gpt-4o-mini', supported_endpoint_types: ['openai', 'openai-response'] }],
      },
      { name: 'cheap', failure: null, models: [{ id: 'gpt-4o-mini', supported_endpoint_types: ['openai'] }] },
      { name: 'broke', failure: 'HTTP 403', models: null },
    ],
    ...extra,
  });

describe('parseKeyModels', () => {
  it('routes as the proxy does: its mode, what it learned and until when, on its clock', () => {
    const route = (extra: Record<string, unknown>, bridge?: 'auto' | 'off' | 'always') =>
      parseKeyModels(body(extra), bridge)[0]!.routes.get('gpt-4o-mini\0responses');
    expect(route({})).toBe('default native');
    // The proxy's mode wins over the editor's setting.
    expect(route({ bridge: 'always' }, 'off')).toBe('default bridged');
    expect(route({}, 'always')).toBe('default bridged');
    const refused = [{ key: 'default', protocol: 'responses', model: 'gpt-4o-mini', until: 5000 }];
    expect(route({ bridge: 'auto', refused, now: 4999 })).toBe('default bridged');
    expect(route({ bridge: 'auto', refused, now: 5000 })).toBe('default native');
  });

  it('keeps a failing key with its reason, and reads nothing from a body that is not the answer', () => {
    expect(parseKeyModels(body({}))[2]).toMatchObject({ name: 'broke', models: undefined, failure: 'HTTP 403' });
    expect(parseKeyModels('not json')).toEqual([]);
    expect(parseKeyModels('{"keys":3}')).toEqual([]);
  });
});
