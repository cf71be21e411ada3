// Issue 23 F-A and F-G through the built CLI: `loopgate run` with a key LIST
// (names, line breaks, one named key), copies of the keys under innocent names
// and inside longer values, and the OTLP collector's headers. The child is a
// real `node -e` printing its environment; nothing of the keys may reach it,
// and a key in its argv stops run with exit 2 naming the position only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempHome } from './io.js';
import { runBuiltCli } from './terminal-run.js';
import { startStack, TOKEN, type Stack } from '../proxy/stack.js';
import { assertNoCanary, makeCanary } from '../log/canary.js';

/** `loopgate run` hands each tool a credential of its own run (rules/access/run-credential.ts), never the token. */
const RUN_CREDENTIAL = expect.stringMatching(/^lg-local-run_[a-z0-9-]+_[0-9a-z]+_[0-9a-z]+_[0-9a-f]{32}$/);

const SK = makeCanary('sk-run-list-');
// Mixed case, and 16 random bytes in standard base64 with `==` padding (the F-B shape).
const MIXED = 'Kb' + makeCanary('').replace(/[^A-Za-z0-9]/g, 'q');
const B64 = Buffer.from(makeCanary('b64-')).subarray(0, 16).toString('base64');
const COLLECTOR = makeCanary('otlp-collector-run-');
const PRINT_ENV = 'process.stdout.write(JSON.stringify(process.env))';

const runBuilt = (args: string[], env: NodeJS.ProcessEnv) => runBuiltCli(args, { env });

describe('loopgate run with a key list (F-A)', () => {
  let stack: Stack;
  let port: string;
  let base: NodeJS.ProcessEnv;
  beforeAll(async () => {
    stack = await startStack();
    port = new URL(stack.proxy.url).port;
    base = { LOOPGATE_HOME: tempHome(), LOOPGATE_TOKEN: TOKEN, KEEP_ME: 'kept' };
  });
  afterAll(async () => stack?.close());

  const childEnv = async (env: NodeJS.ProcessEnv) => {
    const r = await runBuilt(['run', '--port', port, '--', process.execPath, '-e', PRINT_ENV], { ...base, ...env });
    expect(r.code).toBe(0);
    assertNoCanary(r.err, [SK, MIXED, B64]);
    return { env: JSON.parse(r.out) as Record<string, string>, out: r.out, err: r.err };
  };

  it.each([
    ['named, comma-separated', `alpha=${SK},beta=${MIXED}, gamma=${B64}`],
    ['line breaks, unnamed', `${SK}\n${MIXED}\r\n${B64}\n`],
    ['named, one per line (as on --key-stdin)', `alpha=${SK}\nbeta=${MIXED}\ngamma=${B64}`],
  ])(
    '%s: no key, and no variable holding one (alone or inside a longer value), reaches the tool',
    async (_what, list) => {
      const { env, out, err } = await childEnv({
        LOOPGATE_API_KEY: list,
        MY_BACKUP_KEY: SK,
        NOTES: `old ${MIXED} from last year`,
        PADDED: B64,
        CURL_URL: `https://relay.example/v1?key=${encodeURIComponent(B64)}`,
        ENCODED: Buffer.from(`user:${SK}`).toString('base64'),
      });
      expect(env.KEEP_ME).toBe('kept');
      expect(env.OPENAI_API_KEY).toEqual(RUN_CREDENTIAL);
      for (const name of ['LOOPGATE_API_KEY', 'MY_BACKUP_KEY', 'NOTES', 'PADDED', 'CURL_URL', 'ENCODED'])
        expect(env[name], name).toBeUndefined();
      assertNoCanary(out, [SK, MIXED, B64]);
      // Said once, by name: the user may wonder where NOTES went.
      expect(err.trim()).toBe(
        "loopgate run: left out of the tool's environment because they hold a real key: MY_BACKUP_KEY, NOTES, PADDED, CURL_URL, ENCODED.",
      );
    },
  );

  it('one named key: the same', async () => {
    const { env, out } = await childEnv({ LOOPGATE_API_KEY: `alpha=${SK}`, MY_BACKUP_KEY: SK });
    expect(env.MY_BACKUP_KEY).toBeUndefined();
    assertNoCanary(out, [SK]);
  });

  it('one unnamed key with = padding: the same', async () => {
    const { env, out } = await childEnv({ LOOPGATE_API_KEY: B64, MY_BACKUP_KEY: B64 });
    expect(env.MY_BACKUP_KEY).toBeUndefined();
    assertNoCanary(out, [B64]);
  });

  it.each([
    // Positions count the command (node) as 1, then -e and the script.
    [['tool-arg', MIXED], 5],
    [[`--header=Authorization: Bearer ${B64}`], 4],
    [['x', `${SK}`], 5],
  ])(
    'a key of the list in the tool’s arguments (%j): exit 2, the position named, never the value',
    async (args, position) => {
      const r = await runBuilt(['run', '--port', port, '--', process.execPath, '-e', PRINT_ENV, ...args], {
        ...base,
        LOOPGATE_API_KEY: `alpha=${SK},beta=${MIXED}\ngamma=${B64}`,
      });
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain(`argument ${position} (counting the command as 1) holds a real key`);
      assertNoCanary(r.err, [SK, MIXED, B64]);
    },
  );
});

describe('loopgate run and the OTLP collector headers (F-G)', () => {
  let stack: Stack;
  afterAll(async () => stack?.close());

  it('OTEL_EXPORTER_OTLP_HEADERS and the per-signal header variables never reach the tool, nor a copy of the token', async () => {
    stack = await startStack();
    const port = new URL(stack.proxy.url).port;
    const r = await runBuilt(['run', '--port', port, '--', process.execPath, '-e', PRINT_ENV], {
      LOOPGATE_HOME: tempHome(),
      LOOPGATE_TOKEN: TOKEN,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${COLLECTOR}`,
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: `x-collector-token=${COLLECTOR}`,
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: `x-collector-token=${COLLECTOR}`,
      OTEL_EXPORTER_OTLP_LOGS_HEADERS: `x-collector-token=${COLLECTOR}`,
      MY_COLLECTOR_TOKEN_COPY: COLLECTOR,
      OTEL_SERVICE_NAME: 'my-service',
    });
    expect(r.code).toBe(0);
    const env = JSON.parse(r.out) as Record<string, string>;
    expect(Object.keys(env).filter((k) => /HEADERS$/.test(k))).toEqual([]);
    expect(env.MY_COLLECTOR_TOKEN_COPY).toBeUndefined();
    // Not a secret: the tool may export its own spans under its own name.
    expect(env.OTEL_SERVICE_NAME).toBe('my-service');
    assertNoCanary(r.out, [COLLECTOR]);
  });
});
