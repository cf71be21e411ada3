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
}

/** Each protocol's tool_choice, reduced to what the simulator acts on. */
export type SimToolChoice = { kind: 'auto' } | { kind: 'none' } | { kind: 'required' } | { kind: 'named'; name: string };

/**
 * The tool to call, or undefined for a text reply. Under `auto` only a tool the
 * user's text names is called: agents (Codex, Claude Code) send their whole tool
 * list on every turn, and a demo must not hand them a shell call built from the
 * prompt just because `Bash` came first. After a tool result, the reply is text.
 */
export function pickTool(tools: SimTool[], choice: SimToolChoice, userText: string, afterToolResult: boolean): SimTool | undefined {
  if (tools.length === 0 || afterToolResult || choice.kind === 'none') return undefined;
  if (choice.kind === 'named') return tools.find((t) => t.name === choice.name);
  // A whole word only: "rewrite this" must not call Write, nor "I am ready" Read.
  const names = (t: SimTool) => [...new Set([t.name, bareName(t.name)])];
  const named = tools.find((t) => names(t).some((n) => new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(n)}($|[^A-Za-z0-9_])`, 'i').test(userText)));
  // Forced to call something the user did not name: never a command runner.
  return choice.kind === 'required' ? (named ?? tools.find((t) => !COMMAND_TOOL.test(bareName(t.name))) ?? tools[0]) : named;
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
 * Deterministic, harmless arguments from the tool's JSON schema: only the
 * required properties when the schema lists them (so no optional flag that widens permissions, e.g.
 * `dangerouslyDisableSandbox`, is ever set), booleans false, and strings the
 * user's own words: a `backticked` span if there is one ("use Bash to run
 * `echo hi`" gives command "echo hi"), else the start of the text.
 */
export function toolArguments(tool: SimTool, userText: string): Record<string, unknown> {
  const props = isObject(tool.parameters?.properties) ? (tool.parameters.properties as Record<string, unknown>) : {};
  // A schema with no `required` list gets every property (booleans still false).
  const required = Array.isArray(tool.parameters?.required) ? (tool.parameters.required as unknown[]) : undefined;
  const args: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(props)) {
    if (required && !required.includes(name)) continue;
    const s = isObject(schema) ? schema : {};
    if (Array.isArray(s.enum) && s.enum.length > 0) args[name] = s.enum[0];
    else if (s.type === 'string') args[name] = isCommandTool(tool.name) ? commandText(userText) : quotedOrText(userText);
    else if (s.type === 'number' || s.type === 'integer') args[name] = 1;
    else if (s.type === 'boolean') args[name] = false;
    else if (s.type === 'array') args[name] = [];
    else if (s.type === 'object') args[name] = {};
    else args[name] = null;
  }
  return args;
}

/** The raw input of a freeform (custom) tool: code for Codex's `exec`, so treated like a command. */
export function customToolInput(tool: SimTool, userText: string): string {
  return isCommandTool(tool.name) ? commandText(userText) : quotedOrText(userText);
}

function isCommandTool(name: string): boolean {
  return COMMAND_TOOL.test(bareName(name));
}

function quotedOrText(userText: string): string {
  const quoted = /`([^`]+)`/.exec(userText);
  return quoted ? quoted[1]! : userText.slice(0, 40) || 'sim';
}

/**
 * A command-running tool never gets the user's words as its command: "never use Bash
 * to run `rm -rf ~`" must not become that call. Only a plain `echo` (or, for Codex's
 * JavaScript `exec`, a `console.log`) of harmless text passes; anything else is replaced.
 */
export const SAFE_COMMAND = 'echo loopgate-simulator';
function commandText(userText: string): string {
  const quoted = /`([^`]+)`/.exec(userText)?.[1];
  const harmless = /^echo [\w .,:=+@%/-]{1,80}$/.test(quoted ?? '') || /^console\.log\(['"\w .,:=+@%/-]{0,80}\)$/.test(quoted ?? '');
  return harmless ? quoted! : SAFE_COMMAND;
}

/** A stable call id, e.g. `call_…` / `toolu_…`. */
export function callId(prefix: string, tool: SimTool, args: string): string {
  return `${prefix}${createHash('sha256').update(`${tool.name}\n${args}`).digest('hex').slice(0, 24)}`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
