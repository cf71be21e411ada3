// `loopgate serve --port 0 --no-log ARGS` for a test: in this process on real sockets (io.ts startCli), or as
// the built CLI where its process is what is tested (a relative path taken against its working directory, a
// real signal). Its URL, its console lines, a wait for one of them, and stop.
import OpenAI from 'openai';
import { afterAll, beforeAll, expect } from 'vitest';
import { startSimulator, type Fixture, type Simulator } from '../../simulator/index.js';
import { exited, runCli, spawnCli, startCli, tempHome } from './io.js';

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

export interface Served {
  url: string;
  /** Its standard output and error, line by line. */
  lines: string[];
  /** Its output so far, once a line matches `pattern` (the banner's lines come after the ready line) or 5 s passed. */
  line(pattern: RegExp): Promise<string>;
  running(): boolean;
  /** Stops it as SIGTERM does (the built CLI: SIGTERM). */
  stop(): Promise<void>;
}

export async function serve(
  args: string[],
  env: NodeJS.ProcessEnv,
  where: { cwd?: string; built?: boolean } = {},
): Promise<Served> {
  const argv = ['serve', '--port', '0', '--no-log', ...args];
  const home = { LOOPGATE_HOME: tempHome(), ...env };
  let started: { lines: string[]; match: RegExpMatchArray; running(): boolean; stop(): Promise<unknown> };
  if (where.built) {
    const { child, lines, match } = await spawnCli(argv, home, LISTENING, where.cwd);
    started = {
      lines,
      match,
      running: () => child.exitCode === null && child.signalCode === null,
      stop: () => (child.kill('SIGTERM'), exited(child)),
    };
  } else started = await startCli(argv, home, LISTENING, where);
  return {
    url: started.match[1]!,
    lines: started.lines,
    async line(pattern) {
      const deadline = Date.now() + 5000;
      while (!started.lines.some((l) => pattern.test(l)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      return started.lines.join('\n');
    },
    running: () => started.running(),
    async stop() {
      await started.stop();
    },
  };
}

export interface ServedOnSimulator {
  sim: Simulator;
  url: string;
  port: number;
  /** The local token, as `loopgate token` prints it for this home. */
  token: string;
  home: string;
}

/**
 * For one test file: a simulator, and `loopgate serve` (logging, with its own LOOPGATE_HOME) in front of it as a user
 * starts it, in this process on real sockets; started before the file's tests, stopped after them. The fields are
 * there once the tests run.
 */
export function serveOnSimulatorForFile(setup: {
  env: NodeJS.ProcessEnv;
  args?: string[];
  fixture?: Fixture;
  cwd?: string;
}): ServedOnSimulator {
  const served = { home: tempHome() } as ServedOnSimulator;
  let stop: (() => Promise<unknown>) | undefined;
  beforeAll(async () => {
    served.sim = await startSimulator({ port: 0, ...(setup.fixture ? { fixture: setup.fixture } : {}) });
    const started = await startCli(
      ['serve', '--port', '0', '--upstream', served.sim.baseUrl, '--allow-http', ...(setup.args ?? [])],
      { ...setup.env, LOOPGATE_HOME: served.home },
      // The banner's last line: everything it says is set up.
      /^\s+curl -s (\S+)/,
      { cwd: setup.cwd },
    );
    stop = () => started.stop();
    served.url = LISTENING.exec(started.lines.join('\n'))![1]!;
    served.port = Number(new URL(served.url).port);
    served.token = (await runCli(['token'], { LOOPGATE_HOME: served.home })).out.trim();
  }, 60_000);
  afterAll(async () => {
    await stop?.();
    await served.sim?.close();
  });
  return served;
}

/** `serve --replay DIR` at full speed, nothing behind it: the cassette alone answers `question` (gpt-4o-mini) with `answer`. */
export async function expectReplayAnswers(dir: string, token: string, question: string, answer: string): Promise<void> {
  const offline = await serve(['--replay', dir, '--replay-speed', '0'], { LOOPGATE_TOKEN: token });
  try {
    const got = await new OpenAI({
      baseURL: `${offline.url}/v1`,
      apiKey: token,
      maxRetries: 0,
    }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: question }],
    });
    expect(got.choices[0]!.message.content).toBe(answer);
  } finally {
    await offline.stop();
  }
}
