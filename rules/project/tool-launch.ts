// What `loopgate run -- <command>` hands the tool it starts: the parent's
// environment without its secrets (rules/project/child-secrets.ts), plus the
// client environment (base URLs and the local token, as `loopgate env` prints
// them), plus what a known tool needs beyond that (a table per tool, not
// branches). Pure: no I/O.
import { secretsOfEnv, withoutSecrets } from './child-secrets.js';
import { clientEnv, TOOL_CONFLICTS } from './client-env.js';
import { clientBaseUrls } from '../addresses/urls.js';

export type KnownTool = 'claude' | 'codex';

interface ToolRule {
  /** Variables set for this tool on top of the client environment. */
  env(proxyUrl: string, token: string): Record<string, string>;
  /** Variables removed for this tool (it would prefer them over ours, or go elsewhere with them). */
  unset: readonly string[];
  /** The tool's own arguments with ours added. */
  args(userArgs: readonly string[], proxyUrl: string): string[];
}

/** Codex's provider id and the variable its provider block reads the token from. */
const CODEX_PROVIDER = 'loopgate';
const CODEX_TOKEN_VAR = 'LOOPGATE_TOKEN';

const TOOLS: Record<KnownTool, ToolRule> = {
  // Claude Code: ANTHROPIC_BASE_URL is the proxy root (no /v1); ANTHROPIC_AUTH_TOKEN goes out as a
  // Bearer token (ANTHROPIC_API_KEY is left out: TOOL_CONFLICTS). Bedrock/Vertex switches send it elsewhere.
  claude: {
    env: () => ({}),
    unset: ['CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX'],
    args: (userArgs) => [...userArgs],
  },
  // Codex: recent versions ignore OPENAI_BASE_URL for the default provider; a provider block given as
  // command-line config overrides (never written into the user's files) points it at the proxy.
  codex: {
    env: (_proxyUrl, token) => ({ [CODEX_TOKEN_VAR]: token }),
    unset: [],
    args: (userArgs, proxyUrl) =>
      codexProviderChosen(userArgs) ? [...userArgs] : [...codexOverrides(proxyUrl), ...userArgs],
  },
};

/** The known tool a command starts, by its file name (`/usr/local/bin/claude`, `codex.cmd`); undefined for others. */
export function toolOf(command: string): KnownTool | undefined {
  const base = command
    .split(/[\\/]/)
    .pop()!
    .replace(/\.(exe|cmd|bat|ps1)$/i, '')
    .toLowerCase();
  return base in TOOLS ? (base as KnownTool) : undefined;
}

/** `-c` overrides that make Codex use the proxy over the Responses API, reading the token from LOOPGATE_TOKEN. */
function codexOverrides(proxyUrl: string): string[] {
  const baseUrl = clientBaseUrls(proxyUrl).openai;
  return [
    '-c',
    `model_provider=${CODEX_PROVIDER}`,
    '-c',
    `model_providers.${CODEX_PROVIDER}={name="Loopgate",base_url=${JSON.stringify(baseUrl)},env_key="${CODEX_TOKEN_VAR}",wire_api="responses"}`,
  ];
}

/** Whether the user's Codex arguments already pick a provider: `-c model_provider=…`, `--profile`/`-p`, or `--oss`. */
function codexProviderChosen(args: readonly string[]): boolean {
  const setsProvider = (override: string | undefined) =>
    override !== undefined && /^\s*model_provider\s*=/.test(override);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    if (a === '--oss' || a === '-p' || a === '--profile' || a.startsWith('--profile=')) return true;
    if (a === '-c' || a === '--config') {
      if (setsProvider(args[++i])) return true;
    } else if (a.startsWith('--config=')) {
      if (setsProvider(a.slice('--config='.length))) return true;
    } else if (/^-c./.test(a)) {
      if (setsProvider(a.slice(2))) return true;
    } else if (/^-p[^-]/.test(a)) {
      return true; // -pNAME
    }
  }
  return false;
}

/**
 * The tool's environment: the parent's without its secrets (every key of the list, any variable holding
 * one, the OTLP header variables), with OPENAI_* and ANTHROPIC_* pointing at the proxy with the local
 * token, plus what the tool needs.
 */
export function toolEnv(
  parent: NodeJS.ProcessEnv,
  proxyUrl: string,
  token: string,
  tool?: KnownTool,
): Record<string, string> {
  const { env } = withoutSecrets(parent, secretsOfEnv(parent, token));
  // Every variable of the table, whatever the parent had there (the user's own provider key included).
  Object.assign(env, clientEnv(proxyUrl, token, tool));
  if (tool) {
    for (const name of [...(TOOL_CONFLICTS[tool] ?? []), ...TOOLS[tool].unset]) delete env[name];
    Object.assign(env, TOOLS[tool].env(proxyUrl, token));
  }
  return env;
}

/** The tool's arguments: the user's, with a known tool's own additions. */
export function toolArgs(tool: KnownTool | undefined, userArgs: readonly string[], proxyUrl: string): string[] {
  return tool ? TOOLS[tool].args(userArgs, proxyUrl) : [...userArgs];
}

/** How a tool starts `loopgate mcp` (issue 43): the program and its arguments, never a credential. */
export interface McpServerLaunch {
  command: string;
  args: string[];
}

/** The server's name in the tool's MCP list, the variable Codex hands it (the run credential, as for the model calls). */
const MCP_NAME = 'loopgate';

/**
 * `loopgate run --mcp`: the arguments that add Loopgate's MCP server to the tool's own for this run, without
 * touching its config files, or undefined for a tool whose command line cannot. Claude Code takes a JSON
 * `--mcp-config` (it hands a stdio server its own environment, the run credential in it); Codex takes `-c`
 * overrides, and passes a stdio server only the variables `env_vars` names.
 */
export function withMcpServer(
  tool: KnownTool | undefined,
  args: readonly string[],
  server: McpServerLaunch,
): string[] | undefined {
  if (tool === 'claude') {
    const config = JSON.stringify({ mcpServers: { [MCP_NAME]: { type: 'stdio', ...server } } });
    // --mcp-config takes several values: it goes after the user's options (before a `--`), so it eats no prompt.
    const end = args.indexOf('--');
    const at = end === -1 ? args.length : end;
    return [...args.slice(0, at), '--mcp-config', config, ...args.slice(at)];
  }
  if (tool === 'codex') {
    const key = `mcp_servers.${MCP_NAME}`;
    return [
      '-c',
      `${key}.command=${JSON.stringify(server.command)}`,
      '-c',
      `${key}.args=${JSON.stringify(server.args)}`,
      '-c',
      `${key}.env_vars=${JSON.stringify([CODEX_TOKEN_VAR])}`,
      ...args,
    ];
  }
  return undefined;
}
