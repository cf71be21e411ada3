// Key lookup and standing: the 401 and 403 rows of the error table.
import type { IncomingHttpHeaders } from 'node:http';
import { SimError } from './relay-errors.js';
import type { Fixture, FixtureKey } from './fixture.js';

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The key a request presents. `x-api-key` counts only where Anthropic clients use it (/v1/messages). */
export function presentedKey(headers: IncomingHttpHeaders, allowXApiKey: boolean): string {
  const xApiKey = allowXApiKey ? header(headers, 'x-api-key')?.trim() : undefined;
  if (xApiKey) return xApiKey;
  const auth = header(headers, 'authorization');
  const how = allowXApiKey
    ? 'Authorization: Bearer <API_KEY> or x-api-key: <API_KEY>'
    : 'Authorization: Bearer <API_KEY>';
  if (auth === undefined || auth.trim() === '')
    throw new SimError('invalid_api_key', `No API key provided. Send the header ${how}`);
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(auth.trim());
  if (!match) {
    throw new SimError(
      'invalid_api_key',
      'Malformed Authorization header: expected "Bearer <API_KEY>" (one space, no quotes, no other scheme)',
    );
  }
  return match[1]!;
}

export function authenticate(fixture: Fixture, presented: string): FixtureKey {
  const key = fixture.keys.find((k) => k.key === presented);
  // The message never echoes the presented key.
  if (!key)
    throw new SimError(
      'invalid_api_key',
      'Invalid API key: it is wrong or was deleted. Copy it again from the console',
    );
  if (key.status === 'disabled')
    throw new SimError('invalid_api_key', 'This API key is disabled. Enable it or create a new one in the console');
  return key;
}

export function checkStanding(key: FixtureKey): void {
  if (key.status === 'restricted') {
    throw new SimError(
      'access_denied',
      'Access denied: the account of this key is restricted by status. Check the account in the console',
    );
  }
  if (key.balance <= 0) {
    throw new SimError(
      'insufficient_user_quota',
      'Insufficient balance: the quota of this key or account is used up. Top up or raise the key limit in the console',
    );
  }
}
