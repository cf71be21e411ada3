// The relay's error table as a function: what each status (and error code)
// means and what to do about it. 401 is the key, 403 the key's group or model
// permission, 404 a wrong path or, on a protocol's own route, a protocol the
// group's channels lack, 429 a limit, 5xx a temporary failure, other 4xx the
// request body. The diagnosis routes on the status plus the relay's error
// code/type, never on message text: relays localise their messages.

import {
  bridgeKindOf,
  COUNT_TOKENS_PATH,
  PROTOCOL_ORDER,
  PROTOCOL_TABLE,
  minimalFields,
  protocolOfPath,
} from '../protocols/index.js';
import { readErrorEnvelope } from './proxy-errors.js';
import { suggestModels } from '../addresses/suggest.js';
import type { BridgeMode } from '../../core/options.js';
import { isWebSocketRefusal, websocketUnsupportedHint } from '../wire/websocket.js';
import { aliasAdvice } from '../keys/model-aliases.js';
import { quoted } from '../terminal/printable.js';
import { CASSETTE_MISS_CODE } from '../../core/cassette.js';

export interface UpstreamErrorInfo {
  status: number;
  /** `error.code` on OpenAI routes. */
  code?: string;
  /** `error.type` (on the Anthropic route this carries the relay's code). */
  type?: string;
  /** `error.param`, the offending parameter when the relay names one. */
  param?: string;
}

export interface DiagnosisContext {
  method: string;
  /** Path as the client sent it. */
  originalPath: string;
  /** Path forwarded upstream. */
  canonicalPath: string;
  model?: string;
  /** A model alias sent `model` in place of this one (the advice then fixes that alias). */
  aliasedFrom?: string;
  /** Top-level fields of the JSON request body. */
  params?: readonly string[];
  /** Model IDs from the last /models answer, when known. */
  knownModels?: readonly string[];
  upstreamRequestId?: string;
  /** The proxy's bridge mode; the hint offers the bridge only where it is off. */
  bridge?: BridgeMode;
  /** The request was a WebSocket upgrade (a GET with `Upgrade: websocket`). */
  upgrade?: boolean;
  time: Date;
}

export type DiagnosisCode =
  | 'duplicate-v1'
  | 'unknown-endpoint'
  | 'protocol-unsupported'
  | 'websocket-unsupported'
  | 'bad-key'
  | 'permission'
  | 'model-not-found'
  | 'insufficient-balance'
  | 'unsupported-parameter'
  | 'bad-request'
  | 'rate-limited'
  | 'upstream-5xx'
  | 'cassette-miss';

export interface Diagnosis {
  code: DiagnosisCode;
  /** One or two sentences: what is wrong and what to do, in the service's terms ({base_url}, key group, channel). */
  hint: string;
  /** Nearest real model IDs, for model-not-found. */
  suggestions?: string[];
  /** cassette-miss: the request path where it first differs from the nearest recording. */
  at?: string;
}

/** How the editor's chat reports a refusal: the LanguageModelError kinds VS Code knows. */
export type EditorFailureKind = 'noPermissions' | 'notFound' | 'blocked' | 'other';

/**
 * What follows from a diagnosis beyond its hint. The proxy's relay and the
 * editor's chat both read DIAGNOSIS_POLICY, so a new code (or a code that
 * should now fail over) is one row here, and a code without a row does not
 * compile.
 */
export interface DiagnosisPolicy {
  /** With --failover, a replayable request goes to the next key that serves it: this key's quota or rate is the problem. */
  failover: boolean;
  /** The key's model list may be stale (its group changed): the proxy refreshes it soon. */
  refreshModels: boolean;
  /** With several keys, the hint adds which protocols each key serves the model on (another key may be the way out). */
  keysHint: boolean;
  /** How the editor's chat reports it. */
  editor: EditorFailureKind;
  /** What to do in the editor, after the hint (its commands and views). */
  editorAdvice?: string;
}

const PLAIN: DiagnosisPolicy = { failover: false, refreshModels: false, keysHint: false, editor: 'other' };

export const DIAGNOSIS_POLICY: Readonly<Record<DiagnosisCode, DiagnosisPolicy>> = {
  'duplicate-v1': PLAIN,
  'unknown-endpoint': PLAIN,
  'protocol-unsupported': { ...PLAIN, keysHint: true },
  'websocket-unsupported': PLAIN,
  'bad-key': {
    ...PLAIN,
    editor: 'noPermissions',
    editorAdvice: 'Re-copy the key from the service console and store it with Loopgate: Set API Key.',
  },
  permission: {
    ...PLAIN,
    refreshModels: true,
    editor: 'noPermissions',
    editorAdvice:
      "This key's group may not use this; pick a model of the group in the Model Explorer, or add a key of a group that may (Loopgate: Add API Key).",
  },
  'model-not-found': { ...PLAIN, refreshModels: true, editor: 'notFound' },
  'insufficient-balance': { ...PLAIN, failover: true, editor: 'blocked' },
  'unsupported-parameter': PLAIN,
  'bad-request': PLAIN,
  'rate-limited': { ...PLAIN, failover: true, editor: 'blocked' },
  'upstream-5xx': PLAIN,
  'cassette-miss': PLAIN,
};

/** The policy of a diagnosis code as it travels (x-loopgate-diagnosis, a record): undefined for a code that is not a diagnosis (Loopgate's own refusals). */
export function diagnosisPolicy(code: string | undefined): DiagnosisPolicy | undefined {
  return code !== undefined && Object.hasOwn(DIAGNOSIS_POLICY, code)
    ? DIAGNOSIS_POLICY[code as DiagnosisCode]
    : undefined;
}

/**
 * The fields of the minimal request per endpoint path. A refused request is
 * debugged by starting from the minimal request and adding parameters back
 * one at a time, so the hint lists what the request has beyond it.
 */
const MINIMAL: Record<string, readonly string[]> = Object.fromEntries(
  PROTOCOL_ORDER.map((p) => [PROTOCOL_TABLE[p].path, minimalFields(p)]),
);

export function extraParams(canonicalPath: string, params: readonly string[] = []): string[] {
  const minimal = MINIMAL[canonicalPath] ?? ['model', 'stream'];
  return params.filter((p) => !minimal.includes(p));
}

function has(info: UpstreamErrorInfo, code: string): boolean {
  return info.code === code || info.type === code;
}

/** Paths whose only method is POST: a 404 to anything else there says nothing about the protocol or the address. */
const POST_ONLY: readonly string[] = [
  PROTOCOL_TABLE.chat.path,
  PROTOCOL_TABLE.responses.path,
  PROTOCOL_TABLE.messages.path,
  COUNT_TOKENS_PATH,
];

export function diagnose(info: UpstreamErrorInfo, ctx: DiagnosisContext): Diagnosis | undefined {
  const { status } = info;
  if (status < 400) return undefined;
  // A refused upgrade is about the transport: the same key may well answer the POST that follows.
  if (ctx.upgrade && isWebSocketRefusal(status))
    return { code: 'websocket-unsupported', hint: websocketUnsupportedHint(ctx.canonicalPath) };
  if (status === 404 && ctx.method !== 'POST' && POST_ONLY.includes(ctx.canonicalPath)) {
    return {
      code: 'unknown-endpoint',
      hint: `The upstream has no ${ctx.method} ${ctx.canonicalPath}: that endpoint takes POST only. This is no verdict on the key, the protocol or the address; send the request as a POST.`,
    };
  }

  return byErrorCode(info, ctx) ?? byStatus(info, ctx);
}

/** What the error's own code says (a cassette miss, an unknown model, the balance, a parameter), whatever the status. */
function byErrorCode(info: UpstreamErrorInfo, ctx: DiagnosisContext): Diagnosis | undefined {
  // `serve --replay` had no recording for the request (cassette-player/player.ts); its param is the first difference.
  if (has(info, CASSETTE_MISS_CODE)) {
    const at = info.param;
    const where = at
      ? ` It first differs from the nearest recording at ${quoted(at)} (the error's message lists each difference).`
      : ' The cassette has nothing for this method and path.';
    const ignore = at ? `, or --match-ignore ${at} if it varies between runs` : '';
    return {
      code: 'cassette-miss',
      ...(at ? { at } : {}),
      hint: `No recording in the cassette matches this request; nothing was sent upstream.${where} Record it again, replay with --on-miss record${ignore}.`,
    };
  }
  if (has(info, 'model_not_found')) return modelNotFound(ctx);
  if (has(info, 'insufficient_user_quota') || has(info, 'insufficient_quota')) {
    return {
      code: 'insufficient-balance',
      hint: 'Insufficient balance: check the balance, the key limit and the group status in the console.',
    };
  }
  if (has(info, 'unsupported_parameter')) {
    const extra = extraParams(ctx.canonicalPath, ctx.params);
    const named = info.param ? `"${info.param}"` : 'a parameter';
    const rest = extra.length ? ` Parameters beyond the minimal request: ${extra.join(', ')}.` : '';
    return {
      code: 'unsupported-parameter',
      hint: `This model, protocol or channel does not support ${named}. Remove it and add parameters back one at a time from the minimal request.${rest}`,
    };
  }
  return undefined;
}

/** What the status says when the code said nothing the table knows. */
function byStatus(info: UpstreamErrorInfo, ctx: DiagnosisContext): Diagnosis {
  const { status } = info;
  if (status === 404 && (has(info, 'endpoint_not_supported') || has(info, 'unsupported_endpoint'))) {
    return protocolUnsupported(ctx);
  }
  if (status === 404) {
    if (/\/v1\/v1(\/|$)/.test(ctx.canonicalPath) || /\/v1\/v1(\/|$)/.test(ctx.originalPath)) {
      return {
        code: 'duplicate-v1',
        hint: 'The address contains /v1/v1: the base URL already ends in /v1 and the client added another. Set the base URL to {base_url} exactly once.',
      };
    }
    if ([PROTOCOL_TABLE.responses.path, PROTOCOL_TABLE.messages.path, COUNT_TOKENS_PATH].includes(ctx.canonicalPath))
      return protocolUnsupported(ctx);
    return {
      code: 'unknown-endpoint',
      hint: `The upstream has no endpoint ${ctx.method} ${ctx.canonicalPath}. Distinguish the base address, the endpoint path and the full address.`,
    };
  }
  if (status === 401) {
    return {
      code: 'bad-key',
      hint: 'The upstream rejected the API key: wrong, missing, deleted or badly formatted. Re-copy the key from the console (LOOPGATE_API_KEY, or Loopgate: Set API Key).',
    };
  }
  if (status === 403) {
    return {
      code: 'permission',
      hint: "The key's group or model permission does not allow this, or the account is restricted. Check the key's group and model permissions in the console.",
    };
  }
  if (status === 429) {
    return {
      code: 'rate-limited',
      hint: 'Rate, concurrency or quota limit. Lower concurrency, honour Retry-After, and back off with jitter.',
    };
  }
  if (status >= 500) {
    const id = ctx.upstreamRequestId ? `request id ${ctx.upstreamRequestId}` : 'no request id';
    return {
      code: 'upstream-5xx',
      hint: `Temporary service or upstream failure (${id}, at ${ctx.time.toISOString()}). Retry a limited number of times; report it with the request id if it persists.`,
    };
  }
  return {
    code: 'bad-request',
    hint: 'The upstream refused the request body. Check the JSON, remove newly added parameters and retry with the minimal request.',
  };
}

function modelNotFound(ctx: DiagnosisContext): Diagnosis {
  const suggestions = ctx.model && ctx.knownModels ? suggestModels(ctx.model, ctx.knownModels) : [];
  const wanted = ctx.model ? quoted(ctx.model) : 'The model';
  const mean = suggestions.length ? ` Did you mean ${suggestions.map((s) => quoted(s)).join(' or ')}?` : '';
  // The tool's own default (Codex's, Claude Code's) often cannot be changed where the error shows: an alias can.
  const alias =
    ctx.model && suggestions[0]
      ? ` ${aliasAdvice(ctx.aliasedFrom ?? ctx.model, suggestions[0], ctx.aliasedFrom && ctx.model)}`
      : '';
  return {
    code: 'model-not-found',
    suggestions,
    hint: `${wanted} is not available to this key's group. Call GET /models and copy the ID exactly.${mean}${alias}`,
  };
}

function protocolUnsupported(ctx: DiagnosisContext): Diagnosis {
  // A protocol the bridge serves names itself; any other path is taken for Responses.
  const which = PROTOCOL_TABLE[bridgeKindOf(protocolOfPath(ctx.canonicalPath)) ?? 'responses'].title;
  if (ctx.canonicalPath === COUNT_TOKENS_PATH) {
    // Chat Completions has no token counting, so the bridge cannot stand in, and
    // spending a real completion to count would cost the user money unasked.
    return {
      code: 'protocol-unsupported',
      hint:
        'This route does not support Anthropic Messages for this key group, so token counting (/v1/messages/count_tokens) is not available. ' +
        'Chat Completions has no equivalent, so Loopgate cannot bridge it; Claude Code falls back to its own estimate. For exact counts, use a group that supports Anthropic Messages.',
    };
  }
  // `auto` is the default: advise it only where it is off, or where no proxy is in between (doctor).
  const bridge =
    ctx.bridge === 'off'
      ? ', or let Loopgate bridge it (--bridge auto, the default)'
      : ctx.bridge === undefined
        ? ', or send it through the Loopgate proxy, which bridges it by default'
        : '';
  return {
    code: 'protocol-unsupported',
    hint: `This route does not support ${which} for this key group. Use /chat/completions if your client allows it${bridge ? ',' : ' or'} choose a group that supports ${which}${bridge}.`,
  };
}

/** Pulls status-routing fields out of an error body in either envelope (readErrorEnvelope reads it). Never throws. */
export function parseErrorBody(status: number, body: string): UpstreamErrorInfo {
  const e = readErrorEnvelope(body);
  // Not JSON: route on the status alone.
  return e ? { status, code: e.code, type: e.type, param: e.param } : { status };
}
