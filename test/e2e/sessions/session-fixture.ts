// The simulator's default fixture with the default and the Claude key
// rate-limited (generously: no test request is refused), so every answer
// carries its protocol's rate-limit headers for the status bar and the panel.
import fixtureJson from '../../../simulator/default-fixture.json';
import { validateFixture } from '../../../simulator/fixture.js';

const LIMITED = new Set(['sk-demo-default-0000000000000000000001', 'sk-demo-claude-00000000000000000000002']);

export const SESSION_FIXTURE = validateFixture({
  ...fixtureJson,
  keys: fixtureJson.keys.map((k) => (LIMITED.has(k.key) ? { ...k, rpm: 50, tpm: 200_000 } : k)),
});
