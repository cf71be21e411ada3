// `--key-stdin`: the key arrives on standard input, so it is never in argv
// (visible in `ps`) nor in the environment of anything we start.

import { ConfigError } from './command.js';
import { checkApiKey } from '../rules/redaction/api-key.js';
import { parseKeyList } from '../rules/keys/key-list.js';
import { commandLine } from '../rules/project/command-line.js';
import type { NamedKey } from '../core/options.js';

/** LOOPGATE_API_KEY or --key-stdin, checked: a malformed key stops the command with what to fix (exit 3). */
export function validKey(raw: string | undefined, from: string): string | undefined {
  if (raw === undefined) return undefined;
  const checked = checkApiKey(raw);
  if ('problem' in checked) throw new ConfigError(`${from}: ${checked.problem}.`);
  return checked.key;
}

async function readStdin(stdin: NodeJS.ReadableStream, cli: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    if (chunks.reduce((n, c) => n + c.length, 0) > 64 * 1024) break;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim())
    throw new ConfigError(
      `--key-stdin: standard input was empty; pipe the key in, e.g. \`pass show api-key | ${commandLine(cli, 'serve --key-stdin')}\`.`,
    );
  return text;
}

/** `serve --key-stdin`: one key per line (`name=key` names one). */
export async function readKeyListFromStdin(stdin: NodeJS.ReadableStream, cli: string): Promise<string> {
  return readStdin(stdin, cli);
}

/**
 * A key list from LOOPGATE_API_KEY or --key-stdin: bad entries are reported
 * (masked) and left out; none left stops the command (exit 3).
 */
export function validKeyList(raw: string, from: string, warn: (line: string) => void): NamedKey[] {
  const list = parseKeyList(raw, from);
  for (const p of list.problems) warn(`warning: ${p}`);
  if (list.keys.length === 0)
    throw new ConfigError(`${from}: no usable key${list.problems.length ? ' (see above)' : ''}.`);
  return list.keys;
}
