// Base-URL diagnostics. Every verdict comes from rules/addresses/urls.ts: this
// file only maps its problems onto text ranges and quick fixes.
import {
  checkAnthropicBaseUrl,
  checkOpenAIBaseUrl,
  clientBaseUrls,
  isLoopbackHost,
  type UrlProblem,
} from '../../addresses/urls.js';
import type { Occurrence } from './occurrences.js';
import { LINT_CODES, type LintCode, type LintContext, type LintDiagnostic } from './types.js';

const CODE_OF: Record<UrlProblem['code'], LintCode> = {
  'invalid-url': LINT_CODES.badUrl,
  'unsupported-scheme': LINT_CODES.badUrl,
  userinfo: LINT_CODES.badUrl,
  fragment: LINT_CODES.badUrl,
  'insecure-http': LINT_CODES.insecureHttp,
  'duplicate-v1': LINT_CODES.duplicateV1,
  'endpoint-in-base': LINT_CODES.endpointInBase,
  'missing-v1': LINT_CODES.missingV1,
  'anthropic-ends-v1': LINT_CODES.anthropicEndsV1,
};

const FIX_TITLE: Partial<Record<UrlProblem['code'], string>> = {
  'duplicate-v1': 'Remove the duplicated /v1',
  'endpoint-in-base': 'Remove the endpoint path',
  'missing-v1': 'Add /v1',
  'anthropic-ends-v1': 'Remove the trailing /v1 path',
};

function looksLikeHttpUrl(value: string): boolean {
  return /^https?:\/\/[^\s/]/i.test(value) && !/[${}<>]/.test(value);
}

// A path that already carries its own API version is another provider's versioned
// base (Gemini's /v1beta/openai/, Zhipu's /api/paas/v4, Cloudflare's /v1/{account}/…/openai,
// dated versions, Azure's /openai/deployments/{name}): adding /v1 there would break a correct URL.
const VERSION_SEGMENT = /^(v\d+(\.\d+)?([a-z]+\d*)?|\d{4}-\d{2}-\d{2}(-preview)?|deployments)$/i;

function hasOwnVersion(value: string): boolean {
  try {
    return new URL(value).pathname.split('/').some((s) => VERSION_SEGMENT.test(s));
  } catch {
    return false;
  }
}

/** A proxy origin the rules can compare against, or undefined when none is usable. */
function proxyOrigin(proxyUrl: string | undefined): string | undefined {
  if (!proxyUrl) return undefined;
  try {
    const url = new URL(proxyUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return `${url.protocol}//${url.host}`;
  } catch {
    return undefined;
  }
}

export function urlDiagnostics(occ: Occurrence, ctx: LintContext): LintDiagnostic[] {
  if (occ.role !== 'openai-base' && occ.role !== 'anthropic-base') return [];
  const value = occ.value.trim();
  if (!looksLikeHttpUrl(value)) return [];
  const start = occ.start + occ.value.indexOf(value);
  const end = start + value.length;
  const anthropic = occ.role === 'anthropic-base';
  // Rule 4: the OpenAI rule is never applied to an Anthropic prefix.
  const problems = (anthropic ? checkAnthropicBaseUrl(value) : checkOpenAIBaseUrl(value)).filter(
    (p) => p.code !== 'missing-v1' || !hasOwnVersion(value),
  );
  const out: LintDiagnostic[] = [];
  for (const p of problems) {
    const fixTitle = FIX_TITLE[p.code];
    out.push({
      code: CODE_OF[p.code],
      severity: p.severity,
      message:
        p.code === 'insecure-http'
          ? `This address is http:// to a remote host: the API key would travel in clear text. The service is reached over HTTPS: use https://.`
          : p.message,
      start,
      end,
      fixes:
        fixTitle && p.fix
          ? [{ title: `${fixTitle}: ${p.fix}`, edits: [{ start, end, newText: p.fix }], isPreferred: true }]
          : [],
      commands: [],
    });
  }
  const origin = proxyOrigin(ctx.proxyUrl);
  if (origin) {
    let host = '';
    try {
      host = new URL(value).hostname;
    } catch {
      return out;
    }
    if (!isLoopbackHost(host)) {
      const target = anthropic ? clientBaseUrls(origin).anthropic : clientBaseUrls(origin).openai;
      out.push({
        code: LINT_CODES.directToService,
        severity: 'information',
        message: `The Loopgate proxy is running at ${origin}, but this ${anthropic ? 'Anthropic prefix' : 'base URL'} goes to the service directly. Point it at ${target} so requests are checked and logged and the real key stays out of this tool.`,
        start,
        end,
        fixes: [{ title: `Point at the Loopgate proxy: ${target}`, edits: [{ start, end, newText: target }] }],
        commands: [],
      });
    }
  }
  return out;
}
