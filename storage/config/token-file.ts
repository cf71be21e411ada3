// The local token: what local tools send as their "API key" to the proxy.
// 32 random bytes, kept 0600 in the user's config dir; LOOPGATE_TOKEN overrides.
import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { configDir } from './dirs.js';

/** Prefix that makes a local token recognisable in a config file or a log. */
export const TOKEN_PREFIX = 'lg-local-';

export function tokenFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'token');
}

/** The token if there is one already (LOOPGATE_TOKEN or the file); never creates it. */
export function existingToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.LOOPGATE_TOKEN) return env.LOOPGATE_TOKEN;
  try {
    return readFileSync(tokenFile(env), 'utf8').trim() || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return undefined;
  }
}

export function loadOrCreateToken(env: NodeJS.ProcessEnv = process.env): string {
  const existing = existingToken(env);
  if (existing) return existing;
  const file = tokenFile(env);
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // 'wx' so two processes racing to create it cannot both win, and so a link at its name is never written
  // through. The mode is set on the descriptor: a chmod by name would follow a link put there meanwhile.
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw err;
  }
  try {
    fchmodSync(fd, 0o600);
    writeFileSync(fd, token + '\n');
  } finally {
    closeSync(fd);
  }
  return token;
}
