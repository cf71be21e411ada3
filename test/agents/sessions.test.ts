// Real agents' sessions as sessions.live.test.ts runs them (Claude Code with a --resume and side by side, Codex
// with `exec resume`, opencode, pi by its `loopgate run`), replayed from their recording and read back through
// the proxy's own API: grouping, token sums and cost, no binaries.
import { replaySuite } from './replay-suite.js';
import { CASES, SUITE, expectCleanSessionAnswers } from './sessions.facts.js';

replaySuite(SUITE, ['default', 'claude', 'chatOnly'], CASES, expectCleanSessionAnswers);
