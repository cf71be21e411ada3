// Claude Code and Codex as agents.live.test.ts runs them (natively, bridged over a chat-only group, broken base
// URLs rescued, tool round trips), replayed from their recording: the same proxy-side facts, no binaries.
import { replaySuite } from './replay-suite.js';
import { CASES, SUITE } from './agents.facts.js';

replaySuite(SUITE, ['default', 'claude', 'chatOnly'], CASES);
