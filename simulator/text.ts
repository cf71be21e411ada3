// Deterministic reply text, token estimates and chunking. Everything here is a
// pure function of the request, so tests and benchmarks can predict the reply.

export type Finish = 'stop' | 'length' | 'stop_sequence' | 'tool_calls';

export interface TextReply {
  text: string;
  finish: Exclude<Finish, 'tool_calls'>;
  /** The stop string that cut the text, when finish is stop_sequence/stop because of it. */
  matchedStop?: string;
}

const MAX_ECHO = 200;
const FILLER = ' Loopgate simulator filler text.';

/** Roughly 4 characters per token, never zero: enough for usage fields to be plausible. */
export function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/** Total length of every string inside a value; linear, so a 50 MB body stays cheap. */
export function textLength(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) {
    let n = 0;
    for (const v of value) n += textLength(v);
    return n;
  }
  if (value && typeof value === 'object') {
    let n = 0;
    for (const v of Object.values(value)) n += textLength(v);
    return n;
  }
  return 0;
}

/** Text of a message content: a string, or the `text` of its parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') out.push(part);
    else if (part && typeof part === 'object') {
      const p = part as Record<string, unknown>;
      if (typeof p.text === 'string') out.push(p.text);
      else if (p.type === 'tool_result') out.push(contentText(p.content));
    }
  }
  return out.join(' ');
}

/**
 * Text the client injects around the user's words: `<system-reminder>…</system-reminder>`
 * (Claude Code), `<environment_context>…` and `<user_instructions>…` (Codex),
 * `<environment_details>…` (Cline), `<current_datetime>…`, AGENTS.md and CLAUDE.md contents,
 * slash-command markup.
 *
 * A client-style tag is one whose name has a `-` or `_` in it, or is all capitals: HTML a user
 * pastes (`<div>`) has neither. Clients put such blocks on lines of their own (the protocol
 * bridge joins a message's text parts with newlines), while a user who writes
 * `<my-component>` does so inside a sentence: so a client-style block is cut when it fills its
 * lines, and the known client tags below wherever they are. A part that is wholly such blocks
 * or opens with an "# AGENTS.md" heading is the client's. Blocks are found with indexOf, so a
 * huge unclosed tag costs one pass, not a rescan per tag. Wrappers some clients put around the
 * user's own words (Cline's `<task>`, `<feedback>`, `<user_message>`) are unwrapped, not cut.
 * Tool results are never the user's words.
 */
const CLIENT_TAG = /<([A-Za-z]+(?:[-_][A-Za-z0-9]+)+|[A-Z][A-Z0-9_]+)(?:\s[^<>]*)?>/g;
const KNOWN_CLIENT_TAGS = new Set([
  'system-reminder',
  'environment_context',
  'environment_details',
  'current_datetime',
  'user_instructions',
  'INSTRUCTIONS',
  'command-name',
  'command-message',
  'command-args',
  'local-command-stdout',
  'local-command-stderr',
  'user-prompt-submit-hook',
  'user_shell_command',
  'turn_aborted',
]);
const USER_WRAPPERS = /<\/?(task|feedback|answer|user_message|user_query|user_request)>/g;
/** Only this much of one part is searched: a reply echoes at most 200 characters anyway. */
const SCAN_CHARS = 64 * 1024;

function isClientPart(text: string): boolean {
  const t = text.trim();
  if (/^#\s*(?:AGENTS|CLAUDE)\.md\b/.test(t)) return true;
  return t.startsWith('<') && cutClientBlocks(t).trim() === '';
}

function cutClientBlocks(text: string): string {
  const src = (text.length > SCAN_CHARS ? text.slice(0, SCAN_CHARS) : text).replace(USER_WRAPPERS, ' ');
  let out = '';
  let from = 0;
  const unclosed = new Set<string>();
  CLIENT_TAG.lastIndex = 0;
  for (let m = CLIENT_TAG.exec(src); m; m = CLIENT_TAG.exec(src)) {
    if (m.index < from) continue;
    if (unclosed.has(m[1]!)) continue;
    const close = src.indexOf(`</${m[1]}>`, m.index + m[0].length);
    // No close from here means none further on either: each tag name is searched to the end once.
    if (close < 0) {
      unclosed.add(m[1]!);
      continue;
    }
    const end = close + m[1]!.length + 3;
    if (!KNOWN_CLIENT_TAGS.has(m[1]!) && !(startsLine(src, m.index) && endsLine(src, end))) continue;
    out += `${src.slice(from, m.index)} `;
    from = end;
    CLIENT_TAG.lastIndex = from;
  }
  return out + src.slice(from);
}

function startsLine(s: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && (s[i] === ' ' || s[i] === '\t')) i--;
  return i < 0 || s[i] === '\n';
}

function endsLine(s: string, at: number): boolean {
  let i = at;
  while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\r')) i++;
  return i >= s.length || s[i] === '\n';
}

/** The user's own words in a message content: its text parts without client-injected blocks. */
export function userWords(content: unknown): string {
  const parts =
    typeof content === 'string'
      ? [content]
      : Array.isArray(content)
        ? content.flatMap((p) =>
            p && typeof p === 'object' && (p as Record<string, unknown>).type === 'tool_result'
              ? []
              : [contentText([p])],
          )
        : [];
  return parts
    .filter((t) => t.trim() !== '' && !isClientPart(t))
    .map(cutClientBlocks)
    .join(' ')
    .trim();
}

export interface Turn {
  /** The user's last own words. */
  words: string;
  /** The last tool result, when one came after those words: the reply then answers it. */
  toolResult?: string;
}

/**
 * Where the conversation stands. A message that holds only client-injected blocks (the
 * `<system-reminder>` Claude Code adds next to a tool result, which the bridge turns into a
 * user message of its own) is neither the user speaking nor a new turn: after a tool result
 * the model still answers that result, as a real one would, and does not call the tool again.
 */
export function lastTurn(
  messages: unknown[],
  isUser: (m: Record<string, unknown>) => boolean,
  toolResultOf: (m: Record<string, unknown>) => string | undefined,
): Turn {
  let toolResult: string | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!m || typeof m !== 'object' || Array.isArray(m)) continue;
    const msg = m as Record<string, unknown>;
    // Within one message the words follow its tool results (Anthropic puts tool_result blocks first).
    if (isUser(msg)) {
      const words = userWords(msg.content);
      if (words !== '') return toolResult === undefined ? { words } : { words, toolResult };
    }
    toolResult ??= toolResultOf(msg);
  }
  return toolResult === undefined ? { words: '' } : { words: '', toolResult };
}

function firstCodePoints(s: string, n: number): string {
  // Slicing a huge string first keeps this linear in n, not in the input.
  return Array.from(s.slice(0, n * 2))
    .slice(0, n)
    .join('');
}

/** `Echo: <source>` with whitespace collapsed, cut to 200 characters, padded to `minBytes` with filler. */
export function echoText(source: string, minBytes = 0): string {
  const collapsed = firstCodePoints(source, MAX_ECHO * 4)
    .replace(/\s+/g, ' ')
    .trim();
  let text = `Echo: ${firstCodePoints(collapsed, MAX_ECHO) || '(empty)'}`;
  if (minBytes > Buffer.byteLength(text)) {
    const missing = minBytes - Buffer.byteLength(text);
    text += FILLER.repeat(Math.ceil(missing / FILLER.length)).slice(0, missing);
  }
  return text;
}

/** Applies stop strings, then the token limit, as a model would. */
export function limitText(text: string, maxTokens: number | undefined, stops: string[]): TextReply {
  let finish: TextReply['finish'] = 'stop';
  let matchedStop: string | undefined;
  let cut = text.length;
  for (const s of stops) {
    if (!s) continue;
    const at = text.indexOf(s);
    if (at >= 0 && at < cut) {
      cut = at;
      matchedStop = s;
    }
  }
  let out = text.slice(0, cut);
  if (matchedStop !== undefined) finish = 'stop_sequence';
  if (maxTokens !== undefined && estimateTokens(out.length) > maxTokens) {
    out = Array.from(out)
      .slice(0, maxTokens * 4)
      .join('');
    finish = 'length';
    matchedStop = undefined;
  }
  return matchedStop === undefined ? { text: out, finish } : { text: out, finish, matchedStop };
}

/** Splits text into `n` near-equal pieces without splitting a surrogate pair (fewer if the text is shorter). Linear. */
export function splitChunks(text: string, n: number): string[] {
  if (text.length === 0) return [''];
  const count = Math.max(1, Math.min(n, text.length));
  const out: string[] = [];
  let start = 0;
  for (let i = 1; i <= count; i++) {
    let end = i === count ? text.length : Math.round((i * text.length) / count);
    const code = text.charCodeAt(end);
    if (end < text.length && code >= 0xdc00 && code <= 0xdfff) end++;
    if (end > start) out.push(text.slice(start, end));
    start = Math.max(start, end);
  }
  return out;
}

/** Pads a text with filler so it splits into at least `n` chunks (for `x-sim-chunks` larger than the text). */
export function padToChunks(text: string, n: number): string {
  if (text.length >= n) return text;
  const missing = n - text.length;
  return text + FILLER.repeat(Math.ceil(missing / FILLER.length)).slice(0, missing);
}
