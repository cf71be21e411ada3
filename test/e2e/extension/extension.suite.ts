// The Loopgate extension in real VS Code (each target of the tier), against a
// simulator this process starts: extension.ext.ts runs in the target's editor
// session (editor.test.ts), then its logs and files are read from here.
// extension.test.ts keeps the start with a key in settings.json, which needs a
// VS Code of its own.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fixtureJson from '../../../simulator/default-fixture.json';
import { pollUntil } from '../harness/index.js';
import type { EditorSession } from '../harness/editor-session.js';
import type { CodeServerTarget } from '../harness/paths.js';
import { logsSince, markLogs, readLogs, secretsIn } from '../harness/logs.js';
import { simulatorForSuite } from '../harness/suite-simulator.js';

const DEMO_KEYS = fixtureJson.keys.map((k) => k.key);
// What the "Loopgate" LogOutputChannel must have got during the suite (the proxy's redacted traffic lines, and a
// changed base URL reported with what was derived from it, its mistakes as a warning).
const CHANNEL_LINES = [
  /\[info\] GET \/v1\/models 200 /,
  /\[warning\] GET \/v1\/models 401 .*\[bad-key\]/,
  /\[warning\] The address ends in the endpoint path \/chat\/completions.*Derived \{site_url\} = http:\/\/127\.0\.0\.1:\d+, \{base_url\} = http:\/\/127\.0\.0\.1:\d+\/v1\./,
];

export function extensionSuite(target: CodeServerTarget, session: () => EditorSession): void {
  describe(`Loopgate extension in VS Code (${target} VS Code)`, () => {
    const sim = simulatorForSuite();

    it('passes the extension-host suite against the simulator', async () => {
      const { home, logPaths } = session();
      const mark = markLogs(logPaths);
      const run = await session().runPassing({
        suite: 'extension/extension',
        timeoutMs: 180_000,
        settings: { 'loopgate.baseUrl': sim().baseUrl },
      });
      expect(run.passed).toBeGreaterThanOrEqual(15);
      // The simulator saw the Try requests.
      expect(sim().requests.some((r) => r.path.startsWith('/v1/responses'))).toBe(true);
      // Canary: no demo key in code-server/VS Code logs (incl. the output channel) or the proxy's files.
      expect(secretsIn(readLogs([...logPaths, join(home, 'config'), join(home, 'state')]), DEMO_KEYS)).toEqual([]);
      expect(statSync(join(home, 'config', 'token')).mode & 0o077).toBe(0);
      // The channel's lines from this suite (VS Code writes the log file a moment after the line).
      const channel = () =>
        logsSince(mark)
          .filter((l) => l.file.endsWith('/loopgate.loopgate/Loopgate.log'))
          .map((l) => l.text)
          .join('');
      const lines = await pollUntil(() => (CHANNEL_LINES.every((re) => re.test(channel())) ? channel() : undefined), {
        timeoutMs: 15_000,
        what: 'the Loopgate output channel lines',
      }).catch(() => channel());
      expect(lines, 'the Loopgate output channel log').not.toBe('');
      for (const re of CHANNEL_LINES) expect(lines).toMatch(re);
    }, 240_000);
  });
}
