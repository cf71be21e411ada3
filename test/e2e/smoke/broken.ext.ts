// An entry that fails while loading: the harness must say so quickly instead
// of waiting for its deadline.
import { runTests, test } from '../harness/ext/testkit.js';

test('never runs', () => {});

throw new Error('broken entry on purpose');

export const run = runTests;
