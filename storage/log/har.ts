// TrafficRecord[] → HAR 1.2, the format Chrome DevTools and HTTP Toolkit import.
// Loopgate's own fields ride along as `_loopgate` (custom fields start with _).
import { STATUS_CODES } from 'node:http';
import { version } from '../../core/version.js';
import type { TrafficRecord } from '../../core/record.js';
import { appliedRules, sanitizeRecords } from './sanitize.js';
import { createRedactor, type Redactor } from '../../rules/redaction/redact.js';
import { REDACTION_TAG_EXAMPLE } from '../../rules/redaction/key-display.js';

interface HarNameValue {
  name: string;
  value: string;
}

const ORIGIN = 'http://127.0.0.1';

function nameValues(h: Record<string, string> | undefined): HarNameValue[] {
  return Object.entries(h ?? {}).map(([name, value]) => ({ name, value: String(value) }));
}

function header(h: Record<string, string> | undefined, name: string): string | undefined {
  for (const [k, v] of Object.entries(h ?? {})) if (k.toLowerCase() === name) return v;
  return undefined;
}

function int(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.round(n) : -1;
}

function ms(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : 0;
}

/** The proxy's own address as the client used it (its port included), when the Host header was a loopback one. */
function proxyOrigin(host: string | undefined): string {
  return host && /^(127\.0\.0\.1|localhost|\[::1\]):\d{1,5}$/i.test(host) ? `http://${host.toLowerCase()}` : ORIGIN;
}

function requestUrl(path: string, host?: string): URL {
  const p = path.startsWith('/') ? path : `/${path}`;
  try {
    // Never let a logged absolute-form or //host path choose the origin; only a loopback Host picks the port.
    const u = new URL(proxyOrigin(host));
    const q = p.indexOf('?');
    u.pathname = q < 0 ? p : p.slice(0, q);
    if (q >= 0) u.search = p.slice(q);
    return u;
  } catch {
    return new URL(`${ORIGIN}/`);
  }
}

/**
 * The query as name/value pairs. URLSearchParams decodes %XX, so each decoded pair is redacted again: text that
 * was no secret while encoded must not become one here (the record was redacted in its encoded form).
 */
function queryString(url: URL, redactor: Redactor): HarNameValue[] {
  return [...url.searchParams].map(([name, value]) => ({ name: redactor.string(name), value: redactor.string(value) }));
}

function entry(rec: TrafficRecord, redactor: Redactor): object {
  const url = requestUrl(rec.path, header(rec.requestHeaders, 'host'));
  const total = ms(rec.totalMs);
  const wait = Math.min(total, ms(rec.ttfbMs ?? rec.totalMs));
  const reqType = header(rec.requestHeaders, 'content-type') ?? 'application/json';
  const resType =
    header(rec.responseHeaders, 'content-type') ??
    (rec.stream ? 'text/event-stream' : rec.status ? 'application/json' : 'x-unknown');
  const truncated = rec.bodyTruncated ? 'Body cut at the --log-bodies cap.' : undefined;
  return {
    startedDateTime: new Date(rec.time).toISOString(),
    time: total,
    request: {
      method: rec.method,
      url: url.href,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: nameValues(rec.requestHeaders),
      queryString: queryString(url, redactor),
      ...(rec.requestBody !== undefined
        ? { postData: { mimeType: reqType, text: rec.requestBody, ...(truncated ? { comment: truncated } : {}) } }
        : {}),
      headersSize: -1,
      bodySize: int(rec.bytesIn),
    },
    response: {
      status: Number.isInteger(rec.status) && rec.status >= 0 ? rec.status : 0,
      statusText: STATUS_CODES[rec.status] ?? '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: nameValues(rec.responseHeaders),
      content: {
        size: Math.max(0, int(rec.bytesOut)),
        mimeType: resType,
        ...(rec.responseBody !== undefined ? { text: rec.responseBody } : {}),
        ...(truncated && rec.responseBody !== undefined ? { comment: truncated } : {}),
      },
      redirectURL: header(rec.responseHeaders, 'location') ?? '',
      headersSize: -1,
      bodySize: int(rec.bytesOut),
    },
    cache: {},
    timings: { blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait, receive: Math.max(0, total - wait) },
    _resourceType: 'fetch',
    _loopgate: {
      id: rec.id,
      upstreamRequestId: rec.upstreamRequestId,
      path: rec.path,
      canonicalPath: rec.canonicalPath,
      rewrites: rec.rewrites,
      model: rec.model,
      stream: rec.stream,
      params: rec.params,
      errorType: rec.errorType,
      errorCode: rec.errorCode,
      diagnosis: rec.diagnosis,
      bridge: rec.bridge,
      bridgeDropped: rec.bridgeDropped,
      usage: rec.usage,
      retries: rec.retries,
      clientAborted: rec.clientAborted,
      bodyTruncated: rec.bodyTruncated,
    },
  };
}

/**
 * HAR 1.2 of the records. Redaction runs again here (and the --team masks when
 * `team`), so a HAR is safe to share whatever the records went through before.
 * `rules` names extra rules the caller applied, listed in log.comment.
 */
export function toHar(records: TrafficRecord[], opts: { team?: boolean; rules: string[]; secrets?: string[] }): object {
  const clean = sanitizeRecords(records, { team: opts.team, secrets: opts.secrets });
  const redactor = createRedactor({ secrets: opts.secrets ?? [] });
  const rules = [...new Set([...(opts.rules ?? []), ...appliedRules({ team: opts.team })])];
  return {
    log: {
      version: '1.2',
      creator: { name: 'Loopgate', version },
      pages: [],
      comment:
        `Redacted by Loopgate: secrets are replaced by ${REDACTION_TAG_EXAMPLE} (a keyed hash: equal tags mean the same secret; ` +
        `the value cannot be recovered)${opts.team ? ', and people/organisations are masked for sharing (--team)' : ''}. ` +
        `Rules applied: ${rules.join('; ')}.`,
      entries: clean.map((rec) => entry(rec, redactor)),
    },
  };
}

/** The records as JSONL, through the same last pass as toHar. */
export function toJsonl(records: TrafficRecord[], opts: { team?: boolean; secrets?: string[] } = {}): string {
  return sanitizeRecords(records, opts)
    .map((r) => JSON.stringify(r) + '\n')
    .join('');
}
