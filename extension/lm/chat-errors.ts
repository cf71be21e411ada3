// A refused chat request, explained in the service's terms (the same table as
// everywhere: rules/diagnosis/diagnose.ts), sorted into the LanguageModelError kinds
// VS Code knows (NoPermissions, NotFound, Blocked, or a plain error) and with
// what to do in the editor: both from the diagnosis's policy (DIAGNOSIS_POLICY),
// the table the proxy's failover and model-list refresh read too.
import { diagnose, diagnosisPolicy, parseErrorBody, type EditorFailureKind } from '../../rules/diagnosis/diagnose.js';
import { readErrorEnvelope } from '../../rules/diagnosis/proxy-errors.js';

export type FailureKind = EditorFailureKind;

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

export function describeFailure(status: number, body: string, ctx: FailureContext): ChatFailure {
  const info = parseErrorBody(status, body);
  const d = diagnose(info, {
    method: 'POST',
    originalPath: ctx.path,
    canonicalPath: ctx.path,
    model: ctx.model,
    knownModels: ctx.knownModels,
    time: new Date(),
  });
  const upstream = readErrorEnvelope(body)?.message;
  const diagnosis = ctx.diagnosisHeader ?? d?.code;
  // The proxy's diagnosis first; a code of Loopgate's own refusals has no policy, so the local diagnosis decides.
  const policy = diagnosisPolicy(diagnosis) ?? diagnosisPolicy(d?.code);
  const parts = [`${status}${info.code ? ` ${info.code}` : ''}:`, d?.hint ?? upstream ?? 'the request was refused.'];
  if (policy?.editorAdvice) parts.push(policy.editorAdvice);
  if (status === 429 && ctx.retryAfter) parts.push(`Retry after ${ctx.retryAfter} s.`);
  if (upstream && d?.hint && !d.hint.includes(upstream)) parts.push(`(The service said: ${upstream})`);
  return { kind: policy?.editor ?? 'other', status, diagnosis, message: parts.join(' ') };
}
