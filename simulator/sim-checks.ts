// What the relay checks of a request before it answers, in its order: the protocol on the key's group, the
// model (served as its demo model in demo mode), the key's model list, and the rate limits; and what a
// protocol module renders the answer with.
import type { ServerResponse } from 'node:http';
import { PROTOCOL_TABLE } from '../rules/protocols/index.js';
import { SERVED_MODEL_HEADER } from '../rules/keys/demo-family.js';
import { SimError } from './relay-errors.js';
import type { SimControls } from './faults.js';
import { demoServedModel, modelEntries, type FixtureGroup, type FixtureKey } from './fixture.js';
import type { ProtocolModule, RenderContext } from './types.js';
import type { LimitStyle, RequestCost } from './rate-limit.js';
import { estimateTokens, textLength } from './text.js';
import type { RecordedRequest } from './request-record.js';
import type { SimState } from './sim-state.js';

/** Counts the request against the key's limits and puts the rate-limit headers on the answer, 429 included. */
export function admit(
  state: SimState,
  res: ServerResponse,
  key: FixtureKey,
  style: LimitStyle,
  cost: RequestCost,
): void {
  const { headers, refused } = state.limiter.admit(key, cost, style);
  for (const name in headers) res.setHeader(name, headers[name]!);
  if (refused) throw refused;
}

/** What a request counts against tokens per minute: its prompt's estimate and the most it may generate. */
export function requestCost(body: Record<string, unknown>): RequestCost {
  const max = [body.max_tokens, body.max_completion_tokens, body.max_output_tokens].find((v) => typeof v === 'number');
  return {
    input: estimateTokens(
      textLength(body.messages) + textLength(body.system) + textLength(body.input) + textLength(body.instructions),
    ),
    output: (max as number | undefined) ?? 0,
  };
}

/** What a protocol module renders an answer with: the model, whether it reasons, the stream's shape. */
export function renderContext(
  requestId: string,
  model: string,
  group: FixtureGroup,
  controls: SimControls,
): RenderContext {
  return {
    requestId,
    model,
    reasoning: modelEntries(group).some((m) => m.id === model && m.reasoning),
    chunks: controls.chunks,
    responseBytes: controls.responseBytes,
    created: Math.floor(Date.now() / 1000),
  };
}

export function checkProtocol(module: ProtocolModule, key: FixtureKey, group: FixtureGroup): void {
  if (group.protocols.includes(module.protocol)) return;
  const alternative = (['chat', 'responses', 'messages'] as const).find((p) => group.protocols.includes(p));
  const altPath = PROTOCOL_TABLE[alternative ?? 'messages'].path;
  throw new SimError(
    'endpoint_not_supported',
    `This route does not support ${module.title} (POST ${module.path}) for the key group "${key.group}"; use ${altPath} instead, or a group that supports ${module.title}`,
  );
}

/**
 * The model a request is served with: the one it names, or in demo mode the
 * closest demo model of its family, which the answer's header and the record
 * then name.
 */
export function servedModel(
  state: SimState,
  res: ServerResponse | undefined,
  rec: RecordedRequest,
  requested: string,
  key: FixtureKey,
  group: FixtureGroup,
): string {
  const served = demoServedModel(state.demo, requested, key, group);
  if (served === undefined) return requested;
  rec.servedModel = served;
  res?.setHeader(SERVED_MODEL_HEADER, served);
  return served;
}

/** Models a key may use: its group's, narrowed by the key's own list. */
export function usableModels(key: FixtureKey, group: FixtureGroup) {
  const all = modelEntries(group);
  return key.models ? all.filter((m) => key.models!.includes(m.id)) : all;
}

export function checkModel(model: string, key: FixtureKey, group: FixtureGroup): void {
  if (!modelEntries(group).some((m) => m.id === model)) {
    throw new SimError(
      'model_not_found',
      `No available channel for model "${model}" in group "${key.group}". Call GET /v1/models and copy a model id exactly`,
      'model',
    );
  }
  if (key.models && !key.models.includes(model)) {
    throw new SimError(
      'access_denied',
      `This key is not allowed to use model "${model}". Models allowed for this key: ${key.models.join(', ')}`,
      'model',
    );
  }
}
