// loopgate.json's "cassette" section and --match-ignore (rules/cassettes/cassette-settings.ts): one check for both, a bad
// entry said where it is and left out, the rest used.
import { describe, expect, it } from 'vitest';
import { readProjectFile } from '../../rules/project/project-file.js';
import { ignorePathProblem } from '../../rules/cassettes/cassette-settings.js';

describe('cassette ignore paths', () => {
  it('reads "cassette": {"ignore": [...]}, reporting each bad entry where it is', () => {
    const text = JSON.stringify({ cassette: { ignore: ['seed', 'tools.*.description', 'a..b', 3], other: 1 } });
    const read = readProjectFile(text);
    expect(read.cassetteIgnore).toEqual(['seed', 'tools.*.description']);
    expect(read.problems.map((p) => [p.severity, p.message, text.slice(p.start, p.end)])).toEqual([
      ['error', expect.stringMatching(/"cassette"\."ignore": "a\.\.b" is not a request path/), '"a..b"'],
      ['error', '"cassette"."ignore": an ignore path must be a string.', '3'],
      ['error', '"cassette" has no setting "other" (it knows "ignore").', '"other"'],
    ]);
    expect(readProjectFile('{"cassette": []}').problems[0]!.message).toMatch(/"cassette" must be an object/);
    expect(readProjectFile('{"aliases": {}}').cassetteIgnore).toBeUndefined();
  });

  it('takes dot paths with * and refuses empty segments', () => {
    expect(ignorePathProblem('messages.0.content')).toBeUndefined();
    expect(ignorePathProblem('*')).toBeUndefined();
    for (const bad of ['', '.x', 'x.', 'a..b']) expect(ignorePathProblem(bad)).toMatch(/not a request path/);
  });
});
