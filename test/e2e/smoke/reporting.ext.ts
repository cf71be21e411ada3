// Deliberately mixed outcomes: the Node side checks that the harness reports
// each one as it happened (so a broken harness cannot pass silently).
import { assert, runTests, skip, test, waitFor } from '../harness/ext/testkit.js';

test('passes', () => {
  assert.equal(1 + 1, 2);
});

test('fails with an assertion', () => {
  assert.equal('actual', 'expected');
});

test('is skipped', () => {
  skip('nothing to check here');
});

test('waitFor gives up at its deadline', async () => {
  await waitFor(() => false, { timeoutMs: 300, message: 'something that never happens' });
});

test('exceeds its own timeout', () => new Promise(() => {}), { timeoutMs: 300 });

export const run = runTests;
