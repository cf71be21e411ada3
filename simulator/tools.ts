// Tool calls, shared by the three protocols so that a tool round trip behaves
// the same natively and through the bridge. Everything is a pure function of
// the request: the same prompt and tools give the same call and call id.
import { createHash } from 'node:crypto';
import { bad, isObject } from './check.js';

export interface SimTool {
  name: string;
  /** Responses `namespace` tools: the call names its namespace. */
  namespace?: string;
  /** A freeform `custom` tool: the call carries one raw `input` string. */
  custom?: boolean;
  /** JSON schema of the arguments (`parameters` / `input_schema`). */
  parameters?: Record<string, unknown>;
  /** What the tool says about itself (its description, a custom tool's grammar): tells a shell from JavaScript. */
  description?: string;
}

/** Each protocol's tool_choice, reduced to what the simulator acts on. */
export type SimToolChoice =
  { kind: 'auto' } | { kind: 'none' } | { kind: 'required' } | { kind: 'named'; name: string };

/**
 * The tool to call, or undefined for a text reply. Under `auto` only a tool the
 * user's text names is called: agents (Codex, Claude Code) send their whole tool
 * list on every turn, and a demo must not hand them a shell call built from the
 * prompt just because `Bash` came first. After a tool result, the reply is text.
 */
export function pickTool(
  tools: SimTool[],
  choice: SimToolChoice,
  userText: string,
  afterToolResult: boolean,
): SimTool | undefined {
  if (tools.length === 0 || afterToolResult || choice.kind === 'none') return undefined;
  if (choice.kind === 'named') return tools.find((t) => t.name === choice.name);
  // A whole word only: "rewrite this" must not call Write, nor "I am ready" Read.
  const names = (t: SimTool) => [...new Set([t.name, bareName(t.name)])];
  const named = tools.find((t) =>
    names(t).some((n) => new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(n)}($|[^A-Za-z0-9_])`, 'i').test(userText)),
  );
  // Forced to call something the user did not name: never a command runner.
  return choice.kind === 'required'
    ? (named ?? tools.find((t) => !COMMAND_TOOL.test(bareName(t.name))) ?? tools[0])
    : named;
}

/**
 * A flattened name's own part: the protocol bridge sends Codex's namespaced tools
 * to chat routes as `functions__exec`, and MCP tools are `mcp__server__tool`; the
 * user says "exec", not "functions__exec".
 */
function bareName(name: string): string {
  const at = name.lastIndexOf('__');
  return at > 0 && at + 2 < name.length ? name.slice(at + 2) : name;
}

/** A forced tool must be in the list: checked at parse time, before a stream sends its headers. */
export function checkChoice(tools: SimTool[], choice: SimToolChoice, param: string): void {
  if (choice.kind === 'named' && !tools.some((t) => t.name === choice.name)) {
    throw bad(param, `Invalid value for ${param}: no tool named "${choice.name}" in tools`);
  }
}

/** Tools that run commands or code: called only when the user's own words name them. */
const COMMAND_TOOL = /^(bash|shell|exec|exec_command|local_shell|run|terminal|powershell|cmd)$/i;

/**
 * Deterministic, harmless arguments from the tool's JSON schema, as a model would write them: only the
 * required properties when the schema lists them (so no optional flag that widens permissions, e.g.
 * `dangerouslyDisableSandbox`, is ever set), booleans false, strings the user's own words (a
 * `backticked` span if there is one: "use Bash to run `echo hi`" gives command "echo hi", else the start
 * of the text), and a required array one item of its `items` schema (Cline's `run_commands` gets
 * `["echo hi"]`, never `[]`, which would run nothing).
 */
export function toolArguments(tool: SimTool, userText: string): Record<string, unknown> {
  const value = valueFor(tool.parameters ?? {}, tool, userText, 0);
  return isObject(value) ? value : {};
}

function valueFor(schema: Record<string, unknown>, tool: SimTool, userText: string, depth: number): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  const alt = [schema.anyOf, schema.oneOf].find((a): a is unknown[] => Array.isArray(a) && a.length > 0);
  if (type === undefined && alt && isObject(alt[0])) return valueFor(alt[0], tool, userText, depth);
  if (type === 'string')
    return isCommandTool(tool) ? commandText(userText, toolLanguage(tool)) : quotedOrText(userText);
  if (type === 'number' || type === 'integer')
    return typeof schema.minimum === 'number' && schema.minimum > 1 ? schema.minimum : 1;
  if (type === 'boolean') return false;
  // Nesting beyond a few levels is a schema that refers to itself: stop there.
  if (type === 'array')
    return depth < 4 && isObject(schema.items) ? [valueFor(schema.items, tool, userText, depth + 1)] : [];
  if (type === 'object' || isObject(schema.properties)) {
    const props = isObject(schema.properties) ? (schema.properties as Record<string, unknown>) : {};
    // A schema with no `required` list gets every property (booleans still false).
    const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : undefined;
    const out: Record<string, unknown> = {};
    if (depth >= 4) return out;
    for (const [name, sub] of Object.entries(props)) {
      if (required && !required.includes(name)) continue;
      out[name] = valueFor(isObject(sub) ? sub : {}, tool, userText, depth + 1);
    }
    return out;
  }
  return null;
}

/** The raw input of a freeform (custom) tool: code for Codex's `exec`, so treated like a command. */
export function customToolInput(tool: SimTool, userText: string): string {
  return isCommandTool(tool) ? commandText(userText, toolLanguage(tool)) : quotedOrText(userText);
}

function isCommandTool(tool: SimTool): boolean {
  return COMMAND_TOOL.test(bareName(tool.name)) || /^(run_)?commands?$/i.test(bareName(tool.name));
}

type Language = 'shell' | 'js' | 'either';

/** What a command tool runs, as its own description or grammar says; 'either' when it does not say. */
function toolLanguage(tool: SimTool): Language {
  const about = `${tool.description ?? ''} ${JSON.stringify(tool.parameters ?? {})}`;
  const js = /\b(java\s*script|js|node(\.js)?|type\s*script|console\.log)\b/i.test(about);
  const shell = /\b(shell|bash|zsh|sh|powershell|terminal|command[- ]line|cmd)\b/i.test(about);
  return js && !shell ? 'js' : shell && !js ? 'shell' : 'either';
}

function quotedOrText(userText: string): string {
  const quoted = /`([^`]+)`/.exec(userText);
  return quoted ? quoted[1]! : userText.slice(0, 40) || 'sim';
}

/**
 * A command-running tool never gets the user's words as its command: "never use Bash
 * to run `rm -rf ~`" must not become that call. Only a plain `echo` (in a shell) or
 * `console.log` (in JavaScript) of harmless text passes, written in the language the
 * tool runs: asked to `console.log(1)` with a shell tool, a model writes `echo 1`.
 * Anything else is replaced by a harmless line.
 */
export const SAFE_COMMAND = 'echo loopgate-simulator';
const SAFE_TEXT = /^[\w .,:=+@%/-]{1,80}$/;
function commandText(userText: string, language: Language): string {
  const quoted = /`([^`]+)`/.exec(userText)?.[1] ?? '';
  const echo = /^echo ([\w .,:=+@%/-]{1,80})$/.exec(quoted)?.[1];
  const logged = /^console\.log\((?:(['"])([\w .,:=+@%/-]{0,80})\1|([\w.]{1,80}))\)$/.exec(quoted);
  const said = echo ?? (logged ? (logged[2] ?? logged[3]!) : undefined);
  if (said === undefined || !SAFE_TEXT.test(said))
    return language === 'js' ? `console.log(${JSON.stringify(SAFE_COMMAND.slice(5))})` : SAFE_COMMAND;
  if (language === 'either') return quoted;
  if (language === 'shell') return echo !== undefined ? quoted : `echo ${said}`;
  return logged ? quoted : `console.log(${JSON.stringify(said)})`;
}

/** A stable call id, e.g. `call_…` / `toolu_…`. */
export function callId(prefix: string, tool: SimTool, args: string): string {
  return `${prefix}${createHash('sha256').update(`${tool.name}\n${args}`).digest('hex').slice(0, 24)}`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
