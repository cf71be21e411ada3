// The shape of an API key as the user hands it over. A key copied with its
// line break, or with the "Bearer " prefix of a curl example, would otherwise
// reach the upstream as an invalid header or as a wrong key, and the user
// would be told to re-copy a key that is fine. Pure.

/** The key without surrounding whitespace, or a message saying what is wrong with it. */
export function checkApiKey(raw: string): { key: string } | { problem: string } {
  const key = raw.trim();
  if (key === '') return { problem: 'the API key is empty' };
  if (/^bearer\s/i.test(key))
    return { problem: 'the API key starts with "Bearer ": give the key alone, Loopgate adds the prefix' };
  if (/^(['"]).*\1$/.test(key)) return { problem: 'the API key is wrapped in quotes: give the key without them' };

  if (/[\s\x00-\x1f\x7f]/.test(key))
    return { problem: 'the API key contains a space, line break or control character: copy it again, without them' };
  if (/[^\x21-\x7e]/.test(key))
    return {
      problem:
        'the API key contains a character that cannot be sent in an HTTP header (a smart quote or similar): copy it again',
    };
  return { key };
}
