// Starts the SDK-made notes server (test/fixtures/mcp/notes-server.mjs) over streamable HTTP, and the
// command lines that start it over stdio.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';

export const NOTES_SERVER = join(__dirname, '..', 'fixtures', 'mcp', 'notes-server.mjs');

export interface HttpNotesServer {
  url: string;
  close(): Promise<void>;
}

export async function startHttpNotesServer(): Promise<HttpNotesServer> {
  const child: ChildProcess = spawn(process.execPath, [NOTES_SERVER, 'http'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = /^listening (\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the notes server exited (${code}) before listening`)));
  });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
