// Codex over the Responses WebSocket transport as codex-websocket.live.test.ts runs it (a group with the
// transport: a turn and a tool round trip on the socket), replayed from its recording: the upgrades with Codex's
// headers and its messages on the socket, no binary.
import { replaySuite } from './replay-suite.js';
import { CASES, SUITE } from './codex-websocket.facts.js';

// The group without the transport is live only: the upstream's refusal of the upgrade is an answer the proxy
// turns into its own 426, which a cassette does not keep (rules/cassette-exchange.ts), so the replay's player
// answers that upgrade with a miss instead.
replaySuite(SUITE, ['wsOn'], { wsOn: CASES.wsOn, wsOnTool: CASES.wsOnTool });
