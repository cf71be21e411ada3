// A request's stream stages, picked once from its facts (issue 40): only the
// stages that apply. HTTP: the record's capture, the in-flight row, then the
// usage hider (only when Loopgate itself asked the upstream for usage) or the
// bridge's translation (only when bridged), then a mid-stream fault (only when
// a rule fired on this request); the reply masks and writes what comes out.
// A WebSocket turn: its messages masked, captured as events, counted in flight.
import type { StreamTranslator } from '../bridge/index.js';
import type { Redactor } from '../../rules/redaction/redact.js';
import type { ClientReply } from './client-reply.js';
import type { InFlightProgress } from './exchange.js';
import { captureStage, messageCaptureStage } from './capture-stage.js';
import { FaultStage } from './fault-stage.js';
import type { HardCapStage } from './hard-cap-stage.js';
import { inFlightStage } from './in-flight-stage.js';
import { maskStage } from './mask-stage.js';
import { StageChain, type StreamStage } from './stream-stage.js';
import { translateStage } from './translate-stage.js';
import { usageHiderStage } from './usage-hider-stage.js';

export interface HttpStreamFacts {
  reply: ClientReply;
  inFlight?: InFlightProgress;
  /** Loopgate added include_usage to the request: the client's copy drops what that added. */
  usageHider?: { push(chunk: Buffer): Buffer; end(): Buffer };
  /** The bridge serves the request: the answer is translated back. */
  translator?: StreamTranslator;
  fault?: FaultStage;
  /** --budget-hard: last, so it sees the events the client gets. */
  hardCap?: HardCapStage;
}

export function httpStreamStages(facts: HttpStreamFacts): StageChain {
  const stages: StreamStage[] = [captureStage(facts.reply)];
  if (facts.inFlight) stages.push(inFlightStage(facts.inFlight, 'sse'));
  if (facts.usageHider) stages.push(usageHiderStage(facts.usageHider));
  if (facts.translator) stages.push(translateStage(facts.translator));
  if (facts.fault) stages.push(facts.fault);
  if (facts.hardCap) stages.push(facts.hardCap);
  return new StageChain(stages);
}

export interface TurnStreamFacts {
  /** The turn's own reply: its record's capture and byte count. */
  reply: ClientReply;
  inFlight?: InFlightProgress;
}

/** Every upstream message of a WebSocket connection: known secrets masked before anything reads it. */
export function connectionStages(redactor: Pick<Redactor, 'knownSecretsIn'>): StageChain {
  return new StageChain([maskStage(redactor)]);
}

/** A WebSocket turn's upstream messages (already masked): captured as events, counted in flight. */
export function turnStreamStages(facts: TurnStreamFacts): StageChain {
  const stages: StreamStage[] = [messageCaptureStage(facts.reply)];
  if (facts.inFlight) stages.push(inFlightStage(facts.inFlight, 'message'));
  return new StageChain(stages);
}
