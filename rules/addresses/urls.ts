// The address rules of the Model-Access API. {site_url} is the service's
// address (scheme, host, optional path prefix); {base_url} is {site_url}/v1.
// An OpenAI-compatible client is configured with {base_url}: it ends in /v1
// exactly once and carries no endpoint path, since the client appends
// /chat/completions, /responses and so on; a request address never contains
// /v1/v1. An Anthropic client is configured with {site_url} and appends
// /v1/messages itself. The key travels in a header over HTTPS, never in the URL.
// Pure functions of strings: the proxy, the extension and the language server
// all import this module, so there is exactly one definition of a good URL.

import { COUNT_TOKENS_ENDPOINT, PROTOCOL_TABLE, modelsList } from '../protocols/index.js';
import { SECRET_PATTERNS } from '../redaction/secret-patterns.js';
import { shortKey } from '../redaction/key-display.js';

/** Endpoint paths a user may have pasted onto a base URL, longest first. */
export const ENDPOINT_SUFFIXES: readonly string[] = [
  COUNT_TOKENS_ENDPOINT,
  PROTOCOL_TABLE.chat.endpoint,
  '/completions',
  PROTOCOL_TABLE.responses.endpoint,
  PROTOCOL_TABLE.messages.endpoint,
  modelsList.endpoint,
  '/embeddings',
];

/** Known OpenAI-style endpoints the proxy will prefix with /v1 when it is missing. */
export const KNOWN_ENDPOINTS: readonly string[] = [
  modelsList.endpoint,
  PROTOCOL_TABLE.chat.endpoint,
  PROTOCOL_TABLE.responses.endpoint,
  PROTOCOL_TABLE.messages.endpoint,
  COUNT_TOKENS_ENDPOINT,
];

export type UrlProblemCode =
  | 'invalid-url'
  | 'unsupported-scheme'
  | 'userinfo'
  | 'fragment'
  | 'insecure-http'
  | 'duplicate-v1'
  | 'endpoint-in-base'
  | 'missing-v1'
  | 'anthropic-ends-v1';

export interface UrlProblem {
  code: UrlProblemCode;
  /** A sentence in the spec's terms that says what to fix. */
  message: string;
  /** `error` stops the URL from being used; `warning` is fixable by normalising. */
  severity: 'error' | 'warning';
  /** The corrected address, where one can be derived. */
  fix?: string;
}

export interface UpstreamAddress {
  /** The main-site prefix, no trailing slash: `https://h` or `https://h/prefix`. */
  siteUrl: string;
  /** `siteUrl + '/v1'`: what an OpenAI-compatible SDK is configured with. */
  baseUrl: string;
  /** The normalisations applied to reach siteUrl (empty when the input was already clean). */
  problems: UrlProblem[];
}

export type ParseResult = ({ ok: true } & UpstreamAddress) | { ok: false; problems: UrlProblem[] };

export interface ParseOptions {
  /** Permit http:// to a non-loopback host (`--allow-http`). */
  allowHttp?: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return LOOPBACK_HOSTS.has(h) || /^127(\.\d{1,3}){3}$/.test(h) || h.endsWith('.localhost');
}

interface SplitPath {
  /** Path segments left once endpoint suffixes and trailing /v1 segments are gone. */
  prefix: string;
  /** The first endpoint suffix found, e.g. `/chat/completions`. */
  endpoint?: string;
  /** How many trailing /v1 segments there were. */
  v1Count: number;
}

/** Peels endpoint suffixes and /v1 segments off the end of a path, in any order and any number. */
function splitBasePath(path: string): SplitPath {
  const segments = path.split('/').filter((s) => s.length > 0);
  let endpoint: string | undefined;
  let v1Count = 0;
  for (;;) {
    const tail = '/' + segments.join('/').toLowerCase();
    const suffix = ENDPOINT_SUFFIXES.find((e) => tail.endsWith(e));
    if (suffix) {
      endpoint ??= suffix;
      segments.splice(segments.length - suffix.split('/').length + 1);
      continue;
    }
    if (segments.length > 0 && segments[segments.length - 1]!.toLowerCase() === 'v1') {
      segments.pop();
      v1Count++;
      continue;
    }
    // A pasted model address, /v1/models/{id} (ids may hold slashes): the id is not part of the site.
    const lower = segments.map((x) => x.toLowerCase());
    const at = lower.findLastIndex((x, i) => x === 'v1' && lower[i + 1] === 'models' && i + 2 < lower.length);
    if (at >= 0) {
      endpoint ??= modelsList.endpoint;
      segments.splice(at + 1);
      continue;
    }
    break;
  }
  return { prefix: segments.length ? '/' + segments.join('/') : '', endpoint, v1Count };
}

/** Input quoted back in a message, with anything key-shaped masked (people paste keys into URL fields). */
function quote(text: string): string {
  let out = text.length > 120 ? text.slice(0, 120) + '…' : text;
  for (const { pattern } of SECRET_PATTERNS) out = out.replace(pattern, (m) => shortKey(m));
  return out;
}

function parseHttpUrl(input: string): { url: URL } | { problem: UrlProblem } {
  const text = input.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return {
      problem: {
        code: 'invalid-url',
        severity: 'error',
        message: `"${quote(text)}" is not an absolute URL. Give the service address, e.g. https://api.example.com or https://api.example.com/v1.`,
      },
    };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return {
      problem: {
        code: 'unsupported-scheme',
        severity: 'error',
        message: `Scheme ${url.protocol} is not supported: use https://.`,
      },
    };
  }
  return { url };
}

/** Problems that make an address unusable no matter its path. */
function originProblems(url: URL, opts: ParseOptions): UrlProblem[] {
  const problems: UrlProblem[] = [];
  if (url.username || url.password) {
    problems.push({
      code: 'userinfo',
      severity: 'error',
      message:
        'The URL carries a user name or password. Remove it: the API key goes in the Authorization header, never in the URL.',
    });
  }
  if (url.hash) {
    problems.push({
      code: 'fragment',
      severity: 'error',
      message: `Remove the fragment "${quote(url.hash)}" from the URL.`,
    });
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !opts.allowHttp) {
    problems.push({
      code: 'insecure-http',
      severity: 'error',
      message: `The service is reached over HTTPS; http://${url.host} would send the key in clear text. Use https:// (or --allow-http if you really mean it).`,
      fix: 'https://' + url.href.slice('http://'.length),
    });
  }
  return problems;
}

function origin(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

/**
 * Derives {site_url} and {base_url} from whatever the user pasted: a bare host,
 * a base URL, a doubled /v1, or a full endpoint address.
 */
export function parseUpstream(input: string, opts: ParseOptions = {}): ParseResult {
  const parsed = parseHttpUrl(input);
  if ('problem' in parsed) return { ok: false, problems: [parsed.problem] };
  const { url } = parsed;
  const fatal = originProblems(url, opts);
  if (fatal.length) return { ok: false, problems: fatal };

  const split = splitBasePath(url.pathname);
  const siteUrl = origin(url) + split.prefix;
  const baseUrl = siteUrl + '/v1';
  const problems: UrlProblem[] = [];
  if (split.endpoint) {
    problems.push({
      code: 'endpoint-in-base',
      severity: 'warning',
      message: `The address ends in the endpoint path ${split.endpoint}; clients append it themselves. Using ${baseUrl}.`,
      fix: baseUrl,
    });
  }
  if (split.v1Count > 1) {
    problems.push({
      code: 'duplicate-v1',
      severity: 'warning',
      message: `The address contains /v1 ${split.v1Count} times; a request address must never contain /v1/v1. Using ${baseUrl}.`,
      fix: baseUrl,
    });
  }
  if (url.search) {
    problems.push({
      code: 'endpoint-in-base',
      severity: 'warning',
      message: 'The query string of the upstream address is ignored.',
      fix: baseUrl,
    });
  }
  return { ok: true, siteUrl, baseUrl, problems };
}

/**
 * Checks an address configured as an OpenAI-compatible client's base URL
 * (it is {base_url}, ending in /v1 exactly once, with no endpoint path).
 */
export function checkOpenAIBaseUrl(input: string, opts: ParseOptions = {}): UrlProblem[] {
  const parsed = parseHttpUrl(input);
  if ('problem' in parsed) return [parsed.problem];
  const { url } = parsed;
  const problems = originProblems(url, { allowHttp: opts.allowHttp });
  const split = splitBasePath(url.pathname);
  const good = origin(url) + split.prefix + '/v1';
  if (split.endpoint) {
    problems.push({
      code: 'endpoint-in-base',
      severity: 'warning',
      message: `The base URL ends in the endpoint path ${split.endpoint}. The SDK appends it itself: use ${good}.`,
      fix: good,
    });
  }
  if (split.v1Count > 1) {
    problems.push({
      code: 'duplicate-v1',
      severity: 'warning',
      message: `The base URL contains /v1/v1; requests would go to …/v1/v1/… and get 404. Use ${good}.`,
      fix: good,
    });
  } else if (split.v1Count === 0 && !split.endpoint) {
    problems.push({
      code: 'missing-v1',
      severity: 'warning',
      message: `An OpenAI-compatible base URL is {base_url}, which ends in /v1: use ${good}.`,
      fix: good,
    });
  }
  return problems;
}

/**
 * Checks an Anthropic client's prefix (it is {site_url}; the client adds
 * /v1/messages itself). The OpenAI rule (end in /v1) is deliberately not
 * applied here: an Anthropic prefix ending in /v1 gives /v1/v1/messages.
 */
export function checkAnthropicBaseUrl(input: string, opts: ParseOptions = {}): UrlProblem[] {
  const parsed = parseHttpUrl(input);
  if ('problem' in parsed) return [parsed.problem];
  const { url } = parsed;
  const problems = originProblems(url, { allowHttp: opts.allowHttp });
  const split = splitBasePath(url.pathname);
  const good = origin(url) + split.prefix;
  if (split.endpoint || split.v1Count > 0) {
    const tail = url.pathname.replace(/\/+$/, '').slice(split.prefix.length) || '/v1';
    problems.push({
      code: 'anthropic-ends-v1',
      severity: 'warning',
      message: `An Anthropic client's prefix is {site_url} and must not end in ${tail}; the client appends ${PROTOCOL_TABLE.messages.path} itself. Use ${good}.`,
      fix: good,
    });
  }
  return problems;
}

/** The two addresses local tools are pointed at, for a proxy on `origin` (e.g. http://127.0.0.1:8787). */
/** The origin of a proxy listening on host:port (an IPv6 literal needs brackets in a URL). */
export function proxyOrigin(host: string, port: number): string {
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

export function clientBaseUrls(proxyOrigin: string): { openai: string; anthropic: string } {
  const o = proxyOrigin.replace(/\/+$/, '');
  return { openai: o + '/v1', anthropic: o };
}
