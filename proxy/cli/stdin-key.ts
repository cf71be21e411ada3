// `--key-stdin`: the key arrives on standard input, so it is never in argv
// (visible in `ps`) nor in the environment of anything we start.

import { ConfigError } from './command.js';
import { checkApiKey } from '../rules/api-key.js';

/** LOOPGATE_API_KEY or --key-stdin, checked: a malformed key stops the command with what to fix (exit 3). */
export function validKey(raw: string | undefined, from: string): string | undefined {
  if (raw === undefined) return undefined;
  const checked = checkApiKey(raw);
  if ('problem' in checked) throw new ConfigError(`${from}: ${checked.problem}.`);
  return checked.key;
}

export async function readKeyFromStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    if (chunks.reduce((n, c) => n + c.length, 0) > 64 * 1024) break;
  }
  const key = Buffer.concat(chunks).toString('utf8').split(/\r?\n/, 1)[0]!.trim();
  if (!key) throw new ConfigError('--key-stdin: standard input was empty; pipe the key in, e.g. `pass show api-key | loopgate serve --key-stdin`.');
  return key;
}
