// The simulator's fixture: key groups (protocols + models) and API keys.
// Validated once at start so a bad file fails with a message naming the field.
import { readFileSync } from 'node:fs';
import { PROTOCOL_TABLE, type Protocol } from '../rules/protocols/index.js';
import { closestDemoModel } from '../rules/keys/demo-family.js';

const PROTOCOLS = Object.keys(PROTOCOL_TABLE) as readonly Protocol[];
export type KeyStatus = 'active' | 'disabled' | 'restricted';

export interface FixtureModel {
  id: string;
  owned_by?: string;
  /** Chat answers carry `reasoning_content` first, as DeepSeek's reasoner does. */
  reasoning?: boolean;
  /** Parameters this model's channel refuses with 400 unsupported_parameter (e.g. "tools"). */
  unsupported?: string[];
  /** Token limits some relays list with the model (OpenRouter-style `context_length`, `max_output_tokens`). */
  context_length?: number;
  max_output_tokens?: number;
  /** The smallest prefix Messages caches for this model (default: Anthropic's table, prompt-cache.ts). */
  cache_min_tokens?: number;
  /**
   * What demo sessions cost: the vendor model to price this one as ("gpt-6.1-sol" → "gpt-5.1"), or its own prices
   * in USD per million tokens, in loopgate.json's "prices" shape.
   */
  priced_as?: string | FixturePrice;
}

/** USD per million tokens (loopgate.json's "prices" object: rules/sessions/pricing.ts PerMillion). */
export interface FixturePrice {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite5m?: number;
  cacheWrite1h?: number;
}

const PRICE_FIELDS = ['input', 'output', 'cacheRead', 'cacheWrite5m', 'cacheWrite1h'];

function isPrice(v: unknown): v is FixturePrice {
  if (!isObject(v) || typeof v.input !== 'number' || typeof v.output !== 'number') return false;
  return Object.entries(v).every(
    ([k, n]) => PRICE_FIELDS.includes(k) && typeof n === 'number' && Number.isFinite(n) && n >= 0,
  );
}

export interface FixtureGroup {
  protocols: Protocol[];
  models: Array<string | FixtureModel>;
  /** Parameters every channel of the group refuses with 400 unsupported_parameter. */
  unsupported?: string[];
  /**
   * The group's Responses route also takes WebSocket upgrades (the transport
   * Codex tries first). Off (the default), an upgrade gets what a relay without
   * the route answers: 404 invalid_url.
   */
  responses_websocket?: boolean;
}

export interface FixtureKey {
  key: string;
  group: string;
  status: KeyStatus;
  balance: number;
  /** Narrows the group's models for this key. */
  models?: string[];
  /** Requests per minute; absent means unlimited. */
  rpm?: number;
  /** Tokens per minute (prompt estimate + max output asked for); absent means unlimited. */
  tpm?: number;
  /**
   * A Claude subscription's key (what Claude Code's login gets): its Messages answers also carry
   * anthropic-ratelimit-unified-{status,reset,5h-utilization}, the utilization being the larger share
   * of rpm or tpm used. Needs rpm or tpm.
   */
  unified?: boolean;
}

export interface Fixture {
  groups: Record<string, FixtureGroup>;
  keys: FixtureKey[];
}

export class FixtureError extends Error {
  readonly code = 'fixture';
}

const STATUSES: readonly KeyStatus[] = ['active', 'disabled', 'restricted'];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fail(where: string, what: string): never {
  throw new FixtureError(`fixture ${where}: ${what}`);
}

function checkGroup(name: string, g: unknown): FixtureGroup {
  const at = `groups.${name}`;
  if (!isObject(g)) fail(at, 'must be an object with "protocols" and "models"');
  const { protocols, models } = g;
  if (!Array.isArray(protocols) || protocols.length === 0)
    fail(`${at}.protocols`, `must be a non-empty array of ${PROTOCOLS.join(', ')}`);
  protocols.forEach((p, i) => {
    if (!PROTOCOLS.includes(p as Protocol))
      fail(`${at}.protocols[${i}]`, `"${String(p)}" is not one of ${PROTOCOLS.join(', ')}`);
  });
  if (!Array.isArray(models)) fail(`${at}.models`, 'must be an array of model ids or {"id","owned_by"} objects');
  models.forEach((m, i) => {
    if (typeof m === 'string' && m.length > 0) return;
    if (
      isObject(m) &&
      typeof m.id === 'string' &&
      m.id.length > 0 &&
      (m.owned_by === undefined || typeof m.owned_by === 'string') &&
      (m.reasoning === undefined || typeof m.reasoning === 'boolean') &&
      (m.unsupported === undefined || isNameList(m.unsupported)) &&
      (m.context_length === undefined || isPositiveInt(m.context_length)) &&
      (m.max_output_tokens === undefined || isPositiveInt(m.max_output_tokens)) &&
      (m.cache_min_tokens === undefined || isPositiveInt(m.cache_min_tokens)) &&
      (m.priced_as === undefined || (typeof m.priced_as === 'string' && m.priced_as.length > 0) || isPrice(m.priced_as))
    ) {
      return;
    }
    fail(
      `${at}.models[${i}]`,
      'must be a non-empty string or {"id": string, "owned_by"?: string, "reasoning"?: boolean, "unsupported"?: string[], "context_length"?: number, "max_output_tokens"?: number, "cache_min_tokens"?: number, "priced_as"?: string | {"input": number, "output": number, "cacheRead"?: number, "cacheWrite5m"?: number, "cacheWrite1h"?: number}}',
    );
  });
  if (g.unsupported !== undefined && !isNameList(g.unsupported))
    fail(`${at}.unsupported`, 'must be an array of parameter names');
  if (g.responses_websocket !== undefined && typeof g.responses_websocket !== 'boolean')
    fail(`${at}.responses_websocket`, 'must be true or false');
  if (g.responses_websocket === true && !protocols.includes('responses'))
    fail(`${at}.responses_websocket`, 'needs "responses" in the group\'s protocols');
  const group: FixtureGroup = { protocols: protocols as Protocol[], models: models as FixtureGroup['models'] };
  if (g.unsupported !== undefined) group.unsupported = g.unsupported as string[];
  if (g.responses_websocket !== undefined) group.responses_websocket = g.responses_websocket;
  return group;
}

function isNameList(v: unknown): boolean {
  return Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length > 0);
}

function checkKey(i: number, k: unknown, groups: Record<string, FixtureGroup>, seen: Set<string>): FixtureKey {
  const at = `keys[${i}]`;
  if (!isObject(k)) fail(at, 'must be an object with "key", "group", "status", "balance"');
  if (typeof k.key !== 'string' || k.key.trim().length === 0 || /\s/.test(k.key))
    fail(`${at}.key`, 'must be a non-empty string without spaces');
  if (seen.has(k.key)) fail(`${at}.key`, 'is a duplicate of an earlier key');
  seen.add(k.key);
  if (typeof k.group !== 'string' || !(k.group in groups))
    fail(`${at}.group`, `must name one of the groups (${Object.keys(groups).join(', ')})`);
  if (!STATUSES.includes(k.status as KeyStatus)) fail(`${at}.status`, `must be one of ${STATUSES.join(', ')}`);
  if (typeof k.balance !== 'number' || !Number.isFinite(k.balance)) fail(`${at}.balance`, 'must be a number');
  if (k.models !== undefined && (!Array.isArray(k.models) || !k.models.every((m) => typeof m === 'string'))) {
    fail(`${at}.models`, 'must be an array of model ids');
  }
  if (k.rpm !== undefined && (typeof k.rpm !== 'number' || !Number.isInteger(k.rpm) || k.rpm < 1))
    fail(`${at}.rpm`, 'must be a positive integer');
  if (k.tpm !== undefined && !isPositiveInt(k.tpm)) fail(`${at}.tpm`, 'must be a positive integer (tokens per minute)');
  if (k.unified !== undefined && typeof k.unified !== 'boolean') fail(`${at}.unified`, 'must be true or false');
  if (k.unified === true && k.rpm === undefined && k.tpm === undefined)
    fail(`${at}.unified`, 'needs "rpm" or "tpm": the unified utilization is a share of them');
  const key: FixtureKey = { key: k.key, group: k.group, status: k.status as KeyStatus, balance: k.balance };
  if (k.models !== undefined) key.models = k.models as string[];
  if (k.rpm !== undefined) key.rpm = k.rpm as number;
  if (k.tpm !== undefined) key.tpm = k.tpm as number;
  if (k.unified === true) key.unified = true;
  return key;
}

/** Checks a parsed fixture and returns a clean copy; throws FixtureError naming the bad field. */
export function validateFixture(data: unknown): Fixture {
  if (!isObject(data)) fail('root', 'must be a JSON object with "groups" and "keys"');
  if (!isObject(data.groups) || Object.keys(data.groups).length === 0)
    fail('groups', 'must be an object with at least one group');
  const groups: Record<string, FixtureGroup> = {};
  for (const [name, g] of Object.entries(data.groups)) groups[name] = checkGroup(name, g);
  if (!Array.isArray(data.keys)) fail('keys', 'must be an array');
  const seen = new Set<string>();
  const keys = data.keys.map((k, i) => checkKey(i, k, groups, seen));
  return { groups, keys };
}

/** Reads and validates a fixture file. Errors say which file and what to fix. */
export function loadFixture(file: string): Fixture {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new FixtureError(
      `cannot read fixture file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new FixtureError(`fixture file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  try {
    return validateFixture(data);
  } catch (err) {
    throw new FixtureError(`${file}: ${(err as Error).message}`);
  }
}

/** Who publishes a model given only as a string: a guess from its name. */
function defaultOwner(id: string): string {
  const s = id.toLowerCase();
  if (s.startsWith('claude')) return 'anthropic';
  if (/^(gpt|o\d|chatgpt|text-|dall-e|whisper|tts)/.test(s)) return 'openai';
  if (s.startsWith('gemini')) return 'google';
  if (s.startsWith('deepseek')) return 'deepseek';
  return 'custom';
}

function isPositiveInt(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v > 0;
}

export function modelEntries(group: FixtureGroup): FixtureModel[] {
  return group.models.map((m) =>
    typeof m === 'string'
      ? { id: m, owned_by: defaultOwner(m) }
      : {
          id: m.id,
          owned_by: m.owned_by ?? defaultOwner(m.id),
          ...(m.reasoning ? { reasoning: true } : {}),
          ...(m.context_length ? { context_length: m.context_length } : {}),
          ...(m.max_output_tokens ? { max_output_tokens: m.max_output_tokens } : {}),
        },
  );
}

/** The model's own entry, when the fixture gives it as an object. */
function modelObjectOf(group: FixtureGroup, model: string): FixtureModel | undefined {
  const entry = group.models.find((m) => typeof m !== 'string' && m.id === model);
  return typeof entry === 'object' ? entry : undefined;
}

/** The smallest prefix Messages caches for this model, when the fixture sets it. */
export function cacheMinTokens(group: FixtureGroup, model: string): number | undefined {
  return modelObjectOf(group, model)?.cache_min_tokens;
}

/**
 * Every fixture model mapped to a vendor model for pricing, in loopgate.json's
 * "prices" shape ({ "gpt-6.1-sol": "gpt-4o-mini" }): demo sessions show costs.
 */
export function fixturePrices(fixture: Fixture): Record<string, string | FixturePrice> {
  const out: Record<string, string | FixturePrice> = {};
  for (const group of Object.values(fixture.groups)) {
    for (const m of group.models) if (typeof m !== 'string' && m.priced_as) out[m.id] = m.priced_as;
  }
  return out;
}

/** The parameters a request for this model is refused for: the group's and the model's own. */
export function unsupportedParams(group: FixtureGroup, model: string): string[] {
  const entry = group.models.find((m) => typeof m !== 'string' && m.id === model);
  return [...(group.unsupported ?? []), ...(typeof entry === 'object' ? (entry.unsupported ?? []) : [])];
}

/**
 * In demo mode, the model to serve in place of `requested` when the key's
 * group does not list it; undefined otherwise (and always outside demo mode),
 * so the relay's model_not_found stands.
 */
export function demoServedModel(
  demo: boolean | undefined,
  requested: string,
  key: FixtureKey,
  group: FixtureGroup,
): string | undefined {
  if (!demo) return undefined;
  const ids = modelEntries(group)
    .map((m) => m.id)
    .filter((id) => !key.models || key.models.includes(id));
  return closestDemoModel(requested, ids);
}
