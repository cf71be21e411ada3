// Where Loopgate keeps its files. XDG on Linux, the platform's usual places
// elsewhere; LOOPGATE_HOME overrides both (tests point it at a temp dir).
import { homedir } from 'node:os';
import { join } from 'node:path';

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LOOPGATE_HOME) return join(env.LOOPGATE_HOME, 'config');
  if (process.platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'loopgate');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'loopgate');
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'loopgate');
}

function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LOOPGATE_HOME) return join(env.LOOPGATE_HOME, 'state');
  if (process.platform === 'win32') return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'loopgate');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Logs', 'loopgate');
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'loopgate');
}

/** One traffic log per proxy, named by its port, so an export holds one proxy's traffic. */
export function defaultLogFile(env: NodeJS.ProcessEnv, port: number): string {
  return join(stateDir(env), `traffic-${port}.jsonl`);
}
