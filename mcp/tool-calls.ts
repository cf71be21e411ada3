// What each of Loopgate's MCP tools does (core/mcp-tools.ts): read the proxy
// through the one local-API client, with the caller's own credential (the
// token sees every session, a run's credential its own: the proxy decides), and
// shape the answer with presentation/mcp-text.ts. Bad arguments get an error
// that says what to fix; a refusal from the proxy is passed on in its words.
import { LocalApiError, type LocalApiClient, type LocalApiTarget } from '../client/local-api-client.js';
import { sendReplay } from '../client/send-replay.js';
import { requestFailed } from '../core/outcome.js';
import { MCP_MAX_LIMIT, MCP_TOOL_SPECS, MCP_TOOLS, type McpToolSpec } from '../core/mcp-tools.js';
import type { TrafficRecord } from '../core/record.js';
import type { SessionSummary } from '../core/agent-session.js';
import { RUN_CREDENTIAL_PREFIX } from '../rules/access/run-credential.js';
import { replayRequest } from '../rules/replay/replay-request.js';
import { armedText } from '../presentation/fault-text.js';
import {
  errorsAnswer,
  faultsAnswer,
  noSessionAnswer,
  requestAnswer,
  searchAnswer,
  sessionAnswer,
  turnsAnswer,
  usageAnswer,
} from '../presentation/mcp-text.js';
import { USAGE_GROUPINGS, type UsageGrouping } from '../storage/log/usage-totals.js';

/** What the user turned on beyond reading (`loopgate mcp --allow-replay`, `--allow-faults`). */
export interface McpActions {
  replay: boolean;
  faults: boolean;
}

export interface McpToolContext {
  api: LocalApiClient;
  /** The proxy and the credential the client reads with (a replay is sent with it too). */
  target: LocalApiTarget;
  actions: McpActions;
}

export interface ToolAnswer {
  text: string;
  isError?: boolean;
}

/** Records scanned for the errors and usage answers (the ring's newest). */
const SCAN = 1000;

class BadArguments extends Error {}

/** The tools this server lists: the read-only ones, and the actions the user turned on. */
export function toolsFor(actions: McpActions): McpToolSpec[] {
  return MCP_TOOL_SPECS.filter((t) => t.action === undefined || actions[t.action]);
}

export async function callTool(name: string, rawArgs: unknown, ctx: McpToolContext): Promise<ToolAnswer> {
  const spec = toolsFor(ctx.actions).find((t) => t.name === name);
  if (!spec) {
    const off = MCP_TOOL_SPECS.find((t) => t.name === name)?.action;
    return {
      isError: true,
      text: off
        ? `${name} is off: start the server with \`loopgate mcp --allow-${off}\` to turn it on.`
        : `No tool ${JSON.stringify(name.slice(0, 60))}; the tools are ${toolsFor(ctx.actions)
            .map((t) => t.name)
            .join(', ')}.`,
    };
  }
  try {
    return { text: await run(spec, argsOf(spec, rawArgs), ctx) };
  } catch (err) {
    if (err instanceof BadArguments || err instanceof LocalApiError) return { isError: true, text: err.message };
    return { isError: true, text: `Loopgate could not answer: ${(err as Error).message}` };
  }
}

type Args = Record<string, string | number | boolean | undefined>;

/** The arguments checked against the tool's schema: known names, their types, limits in range. */
function argsOf(spec: McpToolSpec, raw: unknown): Args {
  const given = raw ?? {};
  if (typeof given !== 'object' || Array.isArray(given)) throw new BadArguments('The arguments must be an object.');
  const out: Args = {};
  for (const [k, v] of Object.entries(given as Record<string, unknown>)) {
    const prop = spec.inputSchema.properties[k];
    if (!prop)
      throw new BadArguments(
        `${spec.name} takes ${Object.keys(spec.inputSchema.properties).join(', ') || 'no arguments'}, not ${JSON.stringify(k.slice(0, 40))}.`,
      );
    const ok =
      prop.type === 'integer'
        ? Number.isInteger(v) && (v as number) >= 1 && (v as number) <= (k === 'limit' ? MCP_MAX_LIMIT : 1e6)
        : typeof v === prop.type && (prop.enum === undefined || prop.enum.includes(v as string));
    if (!ok)
      throw new BadArguments(
        prop.type === 'integer'
          ? `${k} must be a whole number from 1 to ${k === 'limit' ? MCP_MAX_LIMIT : 1e6}.`
          : `${k} must be ${prop.enum ? `one of ${prop.enum.join(', ')}` : `a ${prop.type}`}.`,
      );
    out[k] = v as string | number | boolean;
  }
  for (const k of spec.inputSchema.required ?? [])
    if (out[k] === undefined || out[k] === '') throw new BadArguments(`${spec.name} needs ${k}.`);
  return out;
}

function isRun(ctx: McpToolContext): boolean {
  return ctx.target.token.startsWith(RUN_CREDENTIAL_PREFIX);
}

/** The session asked for, else the caller's most recently active one (a run's credential sees only its own). */
async function sessionOf(args: Args, ctx: McpToolContext): Promise<SessionSummary | undefined> {
  if (typeof args.session === 'string') return (await ctx.api.session(args.session)).session;
  return (await ctx.api.sessions({ limit: 1 })).sessions[0];
}

async function records(ctx: McpToolContext, q?: string, limit = SCAN): Promise<TrafficRecord[]> {
  return (await ctx.api.traffic({ limit, ...(q ? { q } : {}) })).entries.map((e) => e.record);
}

async function run(spec: McpToolSpec, args: Args, ctx: McpToolContext): Promise<string> {
  const limit = (n: number) => (typeof args.limit === 'number' ? args.limit : n);
  switch (spec.name) {
    case MCP_TOOLS.session: {
      const s = await sessionOf(args, ctx);
      return s ? sessionAnswer(s, args.detail === true) : noSessionAnswer(isRun(ctx));
    }
    case MCP_TOOLS.requests: {
      const s = await sessionOf(args, ctx);
      return s ? turnsAnswer(await ctx.api.session(s.id), limit(10)) : noSessionAnswer(isRun(ctx));
    }
    case MCP_TOOLS.request:
      return requestAnswer(await ctx.api.entry(String(args.id)), args.detail === true);
    case MCP_TOOLS.errors: {
      const failed = (await records(ctx))
        .filter((r) => requestFailed(r) && (args.session === undefined || r.session?.id === args.session))
        .slice(0, limit(3));
      return errorsAnswer(await Promise.all(failed.map((r) => ctx.api.entry(r.id))));
    }
    case MCP_TOOLS.search:
      return searchAnswer(String(args.q), await records(ctx, String(args.q), limit(10)), limit(10));
    case MCP_TOOLS.usage: {
      const by = (args.by ?? 'day') as UsageGrouping;
      if (!USAGE_GROUPINGS.includes(by)) throw new BadArguments(`by is one of ${USAGE_GROUPINGS.join(', ')}.`);
      const all = await records(ctx);
      return usageAnswer(args.session === undefined ? all : all.filter((r) => r.session?.id === args.session), by);
    }
    case MCP_TOOLS.faults:
      return faultsAnswer(await ctx.api.faults(), limit(5));
    case MCP_TOOLS.replay: {
      const plan = replayRequest(await ctx.api.entry(String(args.id)));
      if (!plan.ok) throw new BadArguments(`This request cannot be sent again: ${plan.reason}`);
      const sent = await sendReplay(ctx.target.url, ctx.target.token, plan.request);
      return `Sent again: request ${sent.id} answered ${sent.status} (the \`request\` tool shows it).`;
    }
    case MCP_TOOLS.armFault: {
      const times = typeof args.times === 'number' ? args.times : undefined;
      const armed = await ctx.api.armFault({ rule: String(args.rule), ...(times ? { times } : {}), source: 'api' });
      return armedText(armed.armed);
    }
  }
  throw new BadArguments(`No tool ${spec.name}.`);
}
