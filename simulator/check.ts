// Field checks shared by the protocol parsers. Each failure is a 400 that
// names the parameter, so a user can remove or fix exactly that field.
import { foreignParam, type ParamProtocol } from '../rules/wire/protocol-params.js';
import { SimError } from './relay-errors.js';

export type Body = Record<string, unknown>;

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function bad(param: string, message: string): SimError {
  return new SimError('invalid_request', message, param);
}

export function requireModel(body: Body): string {
  if (body.model === undefined)
    throw bad('model', 'Missing required parameter: model. Copy a model id from GET /v1/models');
  if (typeof body.model !== 'string' || body.model.trim() === '')
    throw bad('model', 'Invalid type for model: expected a non-empty string');
  return body.model;
}

export function optionalBoolean(body: Body, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean')
    throw bad(field, `Invalid type for ${field}: expected a boolean (true or false), got ${describe(v)}`);
  return v;
}

export function optionalNumber(body: Body, field: string, min?: number, max?: number): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw bad(field, `Invalid type for ${field}: expected a number, got ${describe(v)}`);
  if ((min !== undefined && v < min) || (max !== undefined && v > max)) {
    throw bad(field, `Invalid value for ${field}: must be between ${min ?? '-∞'} and ${max ?? '∞'}`);
  }
  return v;
}

export function optionalPositiveInt(body: Body, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw bad(field, `Invalid value for ${field}: expected a positive integer, got ${describe(v)}`);
  return v;
}

export function optionalObject(body: Body, field: string): Record<string, unknown> | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw bad(field, `Invalid type for ${field}: expected an object, got ${describe(v)}`);
  return v;
}

export function optionalStringOrList(body: Body, field: string): string[] {
  const v = body[field];
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v as string[];
  throw bad(field, `Invalid type for ${field}: expected a string or an array of strings`);
}

const TITLES: Record<ParamProtocol, string> = {
  chat: 'Chat Completions',
  responses: 'the Responses API',
  messages: 'Anthropic Messages',
};

/**
 * A parameter that plainly belongs to another protocol (`messages` on
 * /v1/responses) is refused, as the real APIs do. Any other parameter the
 * protocol table does not know is accepted and ignored: clients add fields
 * faster than SDKs type them, and the relay passes them on.
 */
export function rejectForeign(body: Body, protocol: ParamProtocol): void {
  for (const name of Object.keys(body)) {
    const owner = foreignParam(protocol, name);
    if (owner) {
      throw new SimError(
        'unsupported_parameter',
        `Unsupported parameter: '${name}' is not supported by ${TITLES[protocol]} (it belongs to ${TITLES[owner]}). Remove it and retry`,
        name,
      );
    }
  }
}

/** A channel that refuses some parameters (fixture `unsupported`, per group or model). */
export function rejectUnsupported(body: Body, unsupported: readonly string[], protocol: ParamProtocol): void {
  for (const name of unsupported) {
    if (body[name] !== undefined) {
      throw new SimError(
        'unsupported_parameter',
        `Unsupported parameter: '${name}' is not supported by ${TITLES[protocol]} on this channel. Remove it and retry`,
        name,
      );
    }
  }
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
