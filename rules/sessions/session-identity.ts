// Which client sent a request, and the session (and sub-agent) it names, from what the real
// clients were seen to send (docs/sessions.md, "How each client is recognised"; the captured
// requests are test/fixtures/agent-wire/). Headers first; the body only where a client names
// itself nowhere else (pi, Qwen Code in its Anthropic mode, which sends Claude Code's User-Agent).
// Pure: the SessionBook calls it once per request.

/** What a request says about itself. `sessionKey` is the client's own id as sent: hash it before showing it. */
export interface ClientIdentity {
  client: string;
  sessionKey?: string;
  agent?: string;
}

type Headers = Record<string, string | string[] | undefined>;
type Body = Record<string, unknown> | undefined;

/** The first value of a header, whatever the case of its name. */
function header(h: Headers, name: string): string | undefined {
  const direct = h[name];
  const v = direct !== undefined ? direct : h[Object.keys(h).find((k) => k.toLowerCase() === name) ?? ''];
  const one = Array.isArray(v) ? v[0] : v;
  const trimmed = one?.trim();
  return trimmed ? trimmed : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON object held in a string (Codex's x-codex-turn-metadata, Claude Code's metadata.user_id); else undefined. */
function jsonObject(text: string | undefined): Record<string, unknown> | undefined {
  if (!text || !text.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/**
 * The start of the system prompt: Messages' `system` (a string or its first text block),
 * else the first system or developer message of Chat Completions, else Responses' `instructions`.
 */
function systemText(body: Body): string {
  if (!body) return '';
  const sys = body.system;
  if (typeof sys === 'string') return sys;
  if (Array.isArray(sys)) return sys.map((b) => (isObject(b) ? (str(b.text) ?? '') : '')).join('\n');
  if (Array.isArray(body.messages)) {
    const first = body.messages.find((m) => isObject(m) && (m.role === 'system' || m.role === 'developer'));
    if (isObject(first)) {
      if (typeof first.content === 'string') return first.content;
      if (Array.isArray(first.content))
        return first.content.map((p) => (isObject(p) ? (str(p.text) ?? '') : '')).join('\n');
    }
  }
  return str(body.instructions) ?? '';
}

// What each client's system prompt starts with, as captured (docs/sessions.md).
const QWEN_SYSTEM = /^You are Qwen Code\b/;
/** Qwen Code's memory sub-agent runs inside the same process, with a system prompt of its own. */
const QWEN_MEMORY_AGENT = /^You are now acting as the managed memory extraction subagent\b/;
const PI_SYSTEM = /operating inside pi, a coding agent harness/;
const CLAUDE_SUBAGENT = /^x-anthropic-billing-header:[^\n]*\bcc_is_subagent=true/;
/** opencode titles each session with a request of its own (its `title` agent), same x-session-id. */
const OPENCODE_TITLE = /^You are a title generator\b/;

/** Claude Code: x-claude-code-session-id, else the session_id inside metadata.user_id (a JSON string). */
function claudeCode(h: Headers, body: Body): ClientIdentity {
  const metadata = isObject(body?.metadata) ? body.metadata : undefined;
  const userId = jsonObject(str(metadata?.user_id));
  const sessionKey = header(h, 'x-claude-code-session-id') ?? str(userId?.session_id);
  // A sub-agent (the Agent tool) sends its id in x-claude-code-agent-id, and `cc_is_subagent=true` in the
  // billing line that opens its system prompt; the session id stays its parent's.
  const agent =
    header(h, 'x-claude-code-agent-id') ?? (CLAUDE_SUBAGENT.test(systemText(body)) ? 'subagent' : undefined);
  return withOptional({ client: 'claude-code' }, sessionKey, agent);
}

/**
 * Codex: the session-id header (older builds: session_id), else the session inside
 * x-codex-turn-metadata, else the body's prompt_cache_key (also the session id). A sub-agent's
 * turns name it in the metadata's agent_name; the main thread is "/root".
 */
function codex(h: Headers, body: Body): ClientIdentity {
  const turnMeta =
    jsonObject(header(h, 'x-codex-turn-metadata')) ??
    (isObject(body?.client_metadata) ? jsonObject(str(body.client_metadata['x-codex-turn-metadata'])) : undefined);
  const sessionKey =
    header(h, 'session-id') ??
    header(h, 'session_id') ??
    str(turnMeta?.session_id) ??
    header(h, 'thread-id') ??
    str(body?.prompt_cache_key);
  const agentName = str(turnMeta?.agent_name);
  return withOptional({ client: 'codex' }, sessionKey, agentName && agentName !== '/root' ? agentName : undefined);
}

function withOptional(id: ClientIdentity, sessionKey: string | undefined, agent: string | undefined): ClientIdentity {
  if (sessionKey !== undefined) id.sessionKey = sessionKey;
  if (agent !== undefined) id.agent = agent;
  return id;
}

/** The client that sent a request, the session it names (if any) and the sub-agent inside it (if marked). */
export function identifySession(headers: Headers, body: Record<string, unknown> | undefined): ClientIdentity {
  const ua = (header(headers, 'user-agent') ?? '').toLowerCase();
  const originator = (header(headers, 'originator') ?? '').toLowerCase();
  const system = systemText(body);

  if (ua.startsWith('opencode/')) {
    // x-session-id and x-session-affinity carry the same id on every request of a run.
    const sessionKey = header(headers, 'x-session-id') ?? header(headers, 'x-session-affinity');
    return withOptional({ client: 'opencode' }, sessionKey, OPENCODE_TITLE.test(system) ? 'title' : undefined);
  }
  if (
    ua.startsWith('qwencode/') ||
    QWEN_SYSTEM.test(system) ||
    (ua.startsWith('claude-cli/') && QWEN_MEMORY_AGENT.test(system))
  )
    return withOptional(
      { client: 'qwen-code' },
      undefined,
      QWEN_MEMORY_AGENT.test(system) ? 'memory-extraction' : undefined,
    );
  if (ua.startsWith('claude-cli/') || header(headers, 'x-claude-code-session-id') !== undefined)
    return claudeCode(headers, body);
  if (ua.startsWith('codex') || originator.startsWith('codex')) return codex(headers, body);
  if (PI_SYSTEM.test(system)) return { client: 'pi' };
  if (ua === 'loopgate-vscode-chat') return { client: 'vscode' };
  if (ua.startsWith('curl/')) return { client: 'curl' };
  if (ua.startsWith('anthropic/')) return { client: 'anthropic-sdk' };
  if (ua.startsWith('openai/')) return { client: 'openai-sdk' };
  if (header(headers, 'x-stainless-lang') !== undefined)
    return { client: header(headers, 'anthropic-version') !== undefined ? 'anthropic-sdk' : 'openai-sdk' };
  return { client: 'unknown' };
}

/**
 * Whether the body could still change the answer the headers gave: Qwen Code in Anthropic mode sends
 * claude-cli's User-Agent without a session, pi sends the SDKs' headers. Saves parsing the body of a
 * request whose headers already settled it (a `loopgate run` tool that named itself).
 */
export function bodyMayTell(id: ClientIdentity): boolean {
  if (id.sessionKey !== undefined) return false;
  return ['claude-code', 'openai-sdk', 'anthropic-sdk', 'unknown'].includes(id.client);
}
