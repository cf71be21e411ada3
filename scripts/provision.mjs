#!/usr/bin/env node
// Everything the test suites need that the root `npm ci` does not install, side by side, per tier
// (docs/development.md, "Tiers"):
//   node scripts/provision.mjs          the first tier's (`npm test`, scripts/test.mjs): the newest VS Code for the
//                                       e2e suites (provision-e2e.mjs), the Node 24 library clients
//                                       (provision-clients.mjs; the newest VS Code runs on its Node 24) and the
//                                       .vsix packager (vsce.mjs, for the e2e package test). No agent CLI: the first
//                                       tier replays the agents from cassettes;
//   node scripts/provision.mjs --live   the live tier's (`npm run test:live`'s pretest): the agent CLIs (1.9 GB),
//                                       the oldest VS Code the extension supports (and the newest, for the files
//                                       that boot a VS Code of their own), and the packager.
// Each is cached; a warm run takes well under a second.
import * as agents from './provision-agents.mjs';
import * as clients from './provision-clients.mjs';
import * as e2e from './provision-e2e.mjs';
import * as vsce from './vsce.mjs';

const t0 = Date.now();
const live = process.argv.includes('--live');
const tierEnv = { ...process.env, LOOPGATE_TEST_TIER: live ? 'live' : 'first' };
const targets = [...new Set([...e2e.tierTargets(tierEnv), ...e2e.ownVsCodeTargets(tierEnv)])];
const jobs = [
  ['e2e', () => e2e.provision({ targets })],
  // The newest VS Code runs on the clients tree's Node 24.
  ...(live && !targets.includes('current')
    ? []
    : [['clients', () => (clients.supported ? clients.provision() : undefined)]]),
  ['vsce', () => vsce.provision()],
  ...(live ? [['agents', () => (agents.supported ? agents.provision() : undefined)]] : []),
];
const results = await Promise.allSettled(jobs.map(([, job]) => job()));
let failed = false;
results.forEach((r, i) => {
  if (r.status === 'fulfilled') return;
  failed = true;
  process.stderr.write(`[${jobs[i][0]}] FAILED: ${r.reason?.message ?? r.reason}\n`);
});
process.stdout.write(`[provision] ${failed ? 'failed' : 'done'} in ${((Date.now() - t0) / 1000).toFixed(1)}s\n`);
if (failed) process.exit(results.some((r) => r.reason?.code === 'E2E_MISSING_PACKAGES') ? 2 : 1);
