// `loopgate serve --port 0 --no-log ARGS` for a test: in this process on real sockets (io.ts startCli), or as
// the built CLI where its process is what is tested (a relative path taken against its working directory, a
// real signal). Its URL, its console lines, a wait for one of them, and stop.
import { exited, spawnCli, startCli, tempHome } from './io.js';

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
