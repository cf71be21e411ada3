// Which client sent a request, and the session it names, from what the client
// itself sends. First cut: r33-agents replaces the table with what the real
// binaries were seen to send (docs/sessions.md). Pure.

export interface ClientIdentity {
  client: string;
  /** The session the client names (a header or body field), when it names one. */
  sessionKey?: string;
  /** A sub-agent inside that session. */
  agent?: string;
}

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function identifySession(headers: Headers, _body: Record<string, unknown> | undefined): ClientIdentity {
  const ua = header(headers, 'user-agent') ?? '';
  const claude = header(headers, 'x-claude-code-session-id');
  if (claude) return { client: 'claude-code', sessionKey: claude };
  if (/^claude-cli\//i.test(ua)) return { client: 'claude-code' };
  if (/codex/i.test(ua) || header(headers, 'originator')?.includes('codex')) {
    const session = header(headers, 'session_id') ?? header(headers, 'session-id');
    return session ? { client: 'codex', sessionKey: session } : { client: 'codex' };
  }
  if (/opencode/i.test(ua)) return { client: 'opencode' };
  if (header(headers, 'x-stainless-lang')) {
    return { client: header(headers, 'anthropic-version') ? 'anthropic-sdk' : 'openai-sdk' };
  }
  if (/^curl\//.test(ua)) return { client: 'curl' };
  return { client: 'unknown' };
}
