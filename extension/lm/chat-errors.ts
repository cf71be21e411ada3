// A refused chat request, explained in the service's terms (the same table as
// everywhere: rules/diagnose.ts), sorted into the LanguageModelError kinds
// VS Code knows: NoPermissions (401, 403), NotFound (a model the group does
// not have), Blocked (429: rate limit or quota), or a plain error.
import { diagnose, parseErrorBody } from '../../proxy/rules/diagnose.js';
import { readErrorEnvelope } from '../../proxy/rules/proxy-errors.js';

export type FailureKind = 'noPermissions' | 'notFound' | 'blocked' | 'other';

export interface ChatFailure {
  kind: FailureKind;
  status: number;
  /** Loopgate's diagnosis code (x-loopgate-diagnosis, or the local table's). */
  diagnosis?: string;
  message: string;
}

export interface FailureContext {
  path: string;
  model: string;
  knownModels?: readonly string[];
  diagnosisHeader?: string;
  retryAfter?: string;
}

const WHAT_TO_DO: Partial<Record<number, string>> = {
  401: 'Re-copy the key from the service console and store it with Loopgate: Set API Key.',
  403: "This key's group may not use this; pick a model of the group in the Model Explorer, or add a key of a group that may (Loopgate: Add API Key).",
};

export function describeFailure(status: number, body: string, ctx: FailureContext): ChatFailure {
  const info = parseErrorBody(status, body);
  const d = diagnose(info, { method: 'POST', originalPath: ctx.path, canonicalPath: ctx.path, model: ctx.model, knownModels: ctx.knownModels, time: new Date() });
  const upstream = readErrorEnvelope(body)?.message;
  const diagnosis = ctx.diagnosisHeader ?? d?.code;
  const kind: FailureKind =
    status === 401 || status === 403 ? 'noPermissions' : diagnosis === 'model-not-found' || (status === 404 && info.code === 'model_not_found') ? 'notFound' : status === 429 ? 'blocked' : 'other';
  const parts = [`${status}${info.code ? ` ${info.code}` : ''}:`, d?.hint ?? upstream ?? 'the request was refused.'];
  if (WHAT_TO_DO[status]) parts.push(WHAT_TO_DO[status]!);
  if (status === 429 && ctx.retryAfter) parts.push(`Retry after ${ctx.retryAfter} s.`);
  if (upstream && d?.hint && !d.hint.includes(upstream)) parts.push(`(The service said: ${upstream})`);
  return { kind, status, diagnosis, message: parts.join(' ') };
}
