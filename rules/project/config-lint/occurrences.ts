// Finds the `name = value` / `name: value` pairs the rules care about and
// decides what each value is: an OpenAI-style base URL, an Anthropic prefix,
// or a model ID. Works on comment-masked text, so offsets are the original's.
import { inCodexProvider } from './toml-table.js';
import type { FileKind } from './types.js';

export type Role = 'openai-base' | 'anthropic-base' | 'model' | 'other';

export interface Occurrence {
  role: Role;
  /** The name as written (`OPENAI_BASE_URL`, `baseURL`, `model`). */
  name: string;
  value: string;
  /** Offsets of the value without its quotes. */
  start: number;
  end: number;
  /** The quote character around the value, '' when unquoted. */
  quote: string;
}

const NAME =
  String.raw`(?:process\.env\.(?<penv>[A-Za-z_]\w*)` +
  String.raw`|(?:process\.env|os\.environ)\[[ \t]*(?<eq>["'])(?<ienv>[A-Za-z_]\w*)\k<eq>[ \t]*\]` +
  String.raw`|os\.environ\.setdefault\([ \t]*(?<sq>["'])(?<senv>[A-Za-z_]\w*)\k<sq>[ \t]*,` +
  String.raw`|(?<kq>["'])(?<qname>[\w.$-]{1,80})\k<kq>` +
  String.raw`|(?<![\w$.-])(?<bare>[A-Za-z_$][\w$.-]{0,80}))`;
const QUOTED = String.raw`(?<vq>["'\x60])(?<qval>[^"'\x60\n\\]{0,2048})\k<vq>`;
const UNQUOTED = String.raw`(?<uval>[^\s"'\x60#,;{}\[\]]{1,2048})`;

// `=` and `:` for everything (the empty separator only follows setdefault's comma);
// unquoted values only where the format has them; Python string prefixes (r, f, b, rb…) before a quote.
const PAIR_QUOTED = new RegExp(`${NAME}[ \\t]*(?:=|:|(?<=,))[ \\t]*(?:[rRbBuUfF]{0,2})${QUOTED}`, 'g');
const PAIR_DOTENV = new RegExp(`${NAME}[ \\t]*=[ \\t]*(?:${QUOTED}|${UNQUOTED})`, 'g');
const PAIR_YAML = new RegExp(`${NAME}[ \\t]*:[ \\t]+(?:${QUOTED}|${UNQUOTED})`, 'g');
// `OPENAI_BASE_URL=https://…` inside a string or a list item (docker-compose, shell commands in JSON).
const ENV_STYLE =
  /(?<![\w$.-])(?<ename>[A-Z][A-Z0-9_]*(?:BASE_URL|API_BASE|_MODEL))=(?<eval>[^\s"'`#;&|,\]\\]{1,2048})/g;

const OPENAI_NAME = /openai.*(base_?url|api_?base)/i;
const ANTHROPIC_NAME = /(anthropic|claude).*(base_?url|api_?base)/i;
const GENERIC_BASE = /^(base_?url|api_?base(_?url)?|base-url)$/i;
const MODEL_NAME = /^(model|model_?id|model_?name|default_?model)$|_MODEL$/i;

// The AI SDK's createAnthropic takes a base that ends in /v1 (its default is https://api.anthropic.com/v1),
// so it follows the OpenAI-style rule, not the Anthropic-prefix one.
const OPENAI_CTOR =
  /(?:^|[^\w$])(?:new\s+)?((?:Async)?OpenAI|ChatOpenAI|OpenAIEmbeddings|createOpenAI|createOpenAICompatible|createAnthropic)\s*$/;
const ANTHROPIC_CTOR = /(?:^|[^\w$])(?:new\s+)?((?:Async)?Anthropic(?:Bedrock|Vertex)?|ChatAnthropic)\s*$/;

/** In code: the client constructor whose argument list encloses `offset`, if any. */
function enclosingConstructor(masked: string, offset: number): 'openai' | 'anthropic' | undefined {
  let depth = 0;
  const stop = Math.max(0, offset - 4000);
  for (let i = offset - 1; i >= stop; i--) {
    const c = masked[i]!;
    if (c === ')' || c === ']' || c === '}') depth++;
    else if (c === '(' || c === '[' || c === '{') {
      if (depth > 0) {
        depth--;
        continue;
      }
      if (c !== '(') continue; // the options object inside the call: keep walking out
      const before = masked.slice(Math.max(0, i - 80), i);
      if (OPENAI_CTOR.test(before)) return 'openai';
      if (ANTHROPIC_CTOR.test(before)) return 'anthropic';
      return undefined;
    }
  }
  return undefined;
}

/** In config files: which provider the lines around a generic `base_url` talk about. */
function nearbyFamily(masked: string, start: number, end: number): 'openai' | 'anthropic' | undefined {
  let from = start;
  for (let k = 0; k < 6; k++) {
    const p = masked.lastIndexOf('\n', from - 1);
    if (p < 0) {
      from = 0;
      break;
    }
    from = p;
  }
  let to = end;
  for (let k = 0; k < 6; k++) {
    const p = masked.indexOf('\n', to + 1);
    if (p < 0) {
      to = masked.length;
      break;
    }
    to = p;
  }
  const around = (masked.slice(from, start) + ' ' + masked.slice(end, to)).toLowerCase();
  const anthropic = /anthropic|claude/.test(around);
  const openai = /openai|codex|chat\/completions/.test(around);
  if (anthropic && !openai) return 'anthropic';
  if (openai && !anthropic) return 'openai';
  return undefined;
}

function classify(name: string, kind: FileKind, masked: string, start: number, end: number, envStyle: boolean): Role {
  const last = name.slice(name.lastIndexOf('.') + 1);
  if (ANTHROPIC_NAME.test(name)) return 'anthropic-base';
  if (OPENAI_NAME.test(name)) return 'openai-base';
  if (MODEL_NAME.test(last)) return 'model';
  if (!envStyle && GENERIC_BASE.test(last)) {
    if (kind === 'js' || kind === 'python') {
      const family = enclosingConstructor(masked, start);
      return family === 'openai' ? 'openai-base' : family === 'anthropic' ? 'anthropic-base' : 'other';
    }
    // In TOML only Codex's provider tables hold an OpenAI base URL; Zola's site `base_url`,
    // pytest-base-url's in pyproject.toml and Hugo's `baseURL` are not ours.
    if (kind === 'toml') return inCodexProvider(masked, start) ? 'openai-base' : 'other';
    const family = nearbyFamily(masked, start, end);
    // Continue's `apiBase` is a /v1 base for every provider: it builds new URL("messages", apiBase)
    // and its Anthropic default is https://api.anthropic.com/v1/. So it gets the /v1 rule, never the prefix one.
    if (family === 'anthropic' && last === 'apiBase') return 'openai-base';
    return family === 'openai' ? 'openai-base' : family === 'anthropic' ? 'anthropic-base' : 'other';
  }
  return 'other';
}

function pairPatterns(kind: FileKind): RegExp[] {
  if (kind === 'dotenv') return [PAIR_DOTENV];
  if (kind === 'yaml') return [PAIR_QUOTED, PAIR_YAML];
  return [PAIR_QUOTED];
}

/** Every assignment in the text with its role; `limit` bounds the work on odd files. */
export function findOccurrences(text: string, masked: string, kind: FileKind, limit = 2000): Occurrence[] {
  const found = new Map<number, Occurrence>();
  const add = (name: string, value: string, start: number, quote: string, envStyle: boolean): void => {
    if (found.has(start) || found.size >= limit) return;
    const end = start + value.length;
    found.set(start, { role: classify(name, kind, masked, start, end, envStyle), name, value, start, end, quote });
  };
  for (const pattern of pairPatterns(kind)) {
    pattern.lastIndex = 0;
    for (const m of masked.matchAll(pattern)) {
      const g = m.groups!;
      const name = g.penv ?? g.ienv ?? g.senv ?? g.qname ?? g.bare;
      if (!name) continue;
      const raw = g.qval ?? g.uval!;
      const valueOffset =
        g.qval !== undefined ? m.index! + m[0].length - 1 - raw.length : m.index! + m[0].length - raw.length;
      // Read the value from the original: masking never touches string contents, but be exact.
      add(name, text.slice(valueOffset, valueOffset + raw.length), valueOffset, g.vq ?? '', false);
    }
  }
  if (kind !== 'dotenv') {
    ENV_STYLE.lastIndex = 0;
    for (const m of masked.matchAll(ENV_STYLE)) {
      const value = m.groups!.eval!;
      const start = m.index! + m[0].length - value.length;
      add(m.groups!.ename!, text.slice(start, start + value.length), start, '', true);
    }
  }
  return [...found.values()].sort((a, b) => a.start - b.start);
}
