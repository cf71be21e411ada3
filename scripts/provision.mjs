#!/usr/bin/env node
// `npm test`'s pretest: everything the test suites need that the root `npm ci` does not
// install, side by side: real VS Code for the e2e suites (provision-e2e.mjs), the Node 24
// library clients (provision-clients.mjs), the agent CLIs (provision-agents.mjs) and the
// .vsix packager (vsce.mjs, for the e2e package test).
// Each is cached; a warm run takes well under a second.
import * as agents from './provision-agents.mjs';
import * as clients from './provision-clients.mjs';
import * as e2e from './provision-e2e.mjs';
import * as vsce from './vsce.mjs';

const t0 = Date.now();
const jobs = [
  ['e2e', () => e2e.provision()],
  ['clients', () => (clients.supported ? clients.provision() : undefined)],
  ['agents', () => (agents.supported ? agents.provision() : undefined)],
  ['vsce', () => vsce.provision()],
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
