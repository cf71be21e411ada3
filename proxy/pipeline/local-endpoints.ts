// The proxy's own endpoints under /_loopgate/: health (the extension uses it to
// attach to a proxy another window started) and stats. Token-protected, except
// the health challenge, which proves the token without anyone sending it.
// Also the answer to a credential-less connectivity probe (`HEAD /`, `HEAD /api/hello`, `GET /`).
import {
  CHALLENGE_HEADER,
  HEALTH_PATH,
  healthProof,
  isValidNonce,
  PROOF_HEADER,
} from '../../rules/access/health-proof.js';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { isLoopbackHost } from '../../rules/addresses/urls.js';
import { version } from '../../core/version.js';
import { checkToken, presentedCredential, type AuthContext } from './authenticate.js';
import { commandLine } from '../../rules/project/command-line.js';
import type { ProxyContext } from './context.js';
import type { IncomingMessage } from 'node:http';
import type { PathFacts } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import { handleTraffic, isTrafficEndpoint } from './traffic-endpoints.js';
import { handleSessions, isSessionEndpoint } from './session-endpoints.js';
import { handleFaults, isFaultEndpoint } from './fault-endpoints.js';
import { handleRuns } from './run-endpoints.js';
import { readerScope } from './reader-scope.js';
import { handleMcp } from './mcp-endpoint.js';
import { handleMcpReport } from './mcp-report.js';
import { handleBudget, isBudgetEndpoint } from './budget-endpoints.js';
import {
  LOCAL_API_PREFIX,
  LOCAL_ERROR_CODES,
  LOCAL_PATHS,
  type HealthAnswer,
  type HealthChallengeAnswer,
  type KeysAnswer,
  type KeySummary,
  type RefreshAnswer,
  type StatsAnswer,
} from '../../core/local-api.js';

export function isLocalEndpoint(path: string): boolean {
  return path.startsWith(LOCAL_API_PREFIX);
}

/**
 * A connectivity probe: Claude Code (2.1.330) sends a credential-less
 * `HEAD /api/hello` at start to see whether its base URL answers; `HEAD /` is
 * the same question from other tools, and `GET /` is what a person types. Only from loopback (with --allow-remote, a
 * remote peer still needs the token), and only after the Host/Origin guards,
 * which apply to it as to everything.
 */
export function isConnectivityProbe(req: IncomingMessage, path: string): boolean {
  const method = req.method;
  const probe = path === '/' ? method === 'HEAD' || method === 'GET' : path === '/api/hello' && method === 'HEAD';
  if (!probe) return false;
  if (presentedCredential(req) !== undefined) return false;
  return isLoopbackHost((req.socket.remoteAddress ?? '').replace(/^::ffff:/i, ''));
}

/**
 * A small 200 that says nothing about the upstream or the key. The request is
 * logged as a normal 200 record and traffic line (never an error line): the log
 * stays a complete account of who talked to the proxy, and --quiet hides it.
 */
export function answerConnectivityProbe(reply: ClientReply, cli: string): void {
  reply.answer(
    200,
    'text/plain; charset=utf-8',
    `Loopgate is running. API requests need the local token (\`${commandLine(cli, 'token')}\`).\n`,
  );
}

/** Names, fingerprints and model counts (or why a key's list fails): never a key. */
function keySummary(ctx: Pick<ProxyContext, 'keys'>): KeySummary[] {
  return ctx.keys.slots.map((s) => ({
    name: s.name,
    fingerprint: s.fingerprint,
    models: s.models.ids()?.length ?? null,
    failure: s.models.failure() ?? null,
  }));
}

export async function handleLocalEndpoint(
  req: IncomingMessage,
  paths: PathFacts,
  reply: ClientReply,
  ctx: ProxyContext,
): Promise<void> {
  // The reads of sessions take a live run's credential too, for its own sessions (reader-scope.ts); the live feed,
  // fault arming and the rest take the token.
  const read = req.method === 'GET' && paths.path !== LOCAL_PATHS.trafficLive;
  if (isTrafficEndpoint(paths.path)) {
    const scope = read ? readerScope(req, ctx) : (checkToken(req, ctx, 'loopgate-api'), undefined);
    return handleTraffic(req, paths, reply, ctx, scope);
  }
  if (isFaultEndpoint(paths.path)) {
    const scope = read ? readerScope(req, ctx) : (checkToken(req, ctx, 'loopgate-api'), undefined);
    return handleFaults(req, paths, reply, ctx, scope);
  }
  if (isSessionEndpoint(paths.path)) {
    const scope = read ? readerScope(req, ctx) : (checkToken(req, ctx, 'loopgate-api'), undefined);
    return handleSessions(req, paths, reply, ctx, scope);
  }
  if (paths.path === LOCAL_PATHS.mcp) {
    readerScope(req, ctx);
    return handleMcp(req, reply);
  }
  // Checks the credential itself: a run's is taken (mcp-wrap under `loopgate run` holds only that).
  if (paths.path === LOCAL_PATHS.mcpCalls) return handleMcpReport(req, reply, ctx);
  if (isBudgetEndpoint(paths.path)) {
    checkToken(req, ctx, 'loopgate-api');
    return handleBudget(req, paths, reply, ctx);
  }
  if (paths.path === LOCAL_PATHS.runs) {
    checkToken(req, ctx, 'loopgate-api');
    return handleRuns(req, reply, ctx);
  }
  const headers: Record<string, string> = {};
  const payload = await infoAnswer(req, paths.path, ctx, headers);
  reply.answer(200, 'application/json', JSON.stringify(payload), headers);
}

type InfoContext = AuthContext &
  Pick<
    ProxyContext,
    'proofToken' | 'siteUrl' | 'baseUrl' | 'simulator' | 'keys' | 'log' | 'otlp' | 'ring' | 'stats' | 'bridge'
  >;

/** The proxy's own state, one endpoint a step; an unknown path says which there are. `headers` gets the proof. */
async function infoAnswer(
  req: IncomingMessage,
  path: string,
  ctx: InfoContext,
  headers: Record<string, string>,
): Promise<unknown> {
  if (path === HEALTH_PATH) return healthAnswer(req, ctx, headers);
  checkToken(req, ctx, 'loopgate-api');
  switch (path) {
    case LOCAL_PATHS.stats:
      return statsAnswer(ctx);
    case LOCAL_PATHS.keys:
      return keysAnswer(ctx);
    case LOCAL_PATHS.refresh:
      // Every key's GET /models now (the editor's Refresh; after a key's group changed).
      await ctx.keys.refresh();
      return { keys: keySummary(ctx) } satisfies RefreshAnswer;
    default:
      throw new ProxyError(
        404,
        LOCAL_ERROR_CODES.unknownEndpoint,
        `No such Loopgate endpoint ${path}. Known: ${[LOCAL_PATHS.health, LOCAL_PATHS.stats, LOCAL_PATHS.keys, LOCAL_PATHS.refresh, LOCAL_PATHS.traffic, LOCAL_PATHS.sessions, LOCAL_PATHS.faults, LOCAL_PATHS.runs, LOCAL_PATHS.budget].join(', ')}.`,
      );
  }
}

/** The health answer: with a challenge, the proof of the token (in `headers`); with the token, the proxy's state. */
function healthAnswer(
  req: IncomingMessage,
  ctx: AuthContext &
    Pick<ProxyContext, 'proofToken' | 'siteUrl' | 'baseUrl' | 'simulator' | 'keys' | 'log' | 'otlp' | 'ring'>,
  headers: Record<string, string>,
): HealthChallengeAnswer | HealthAnswer {
  const challenge = req.headers[CHALLENGE_HEADER];
  if (challenge !== undefined && !isValidNonce(challenge)) {
    throw new ProxyError(
      400,
      LOCAL_ERROR_CODES.badChallenge,
      `${CHALLENGE_HEADER} must be 22–128 base64url characters (a random nonce).`,
    );
  }
  // Without a token the proxy cannot prove anything: it says so, and a window will not attach.
  // (A proxy the extension started with requireToken off still proves the token it was given.)
  if (challenge && ctx.proofToken !== null)
    headers[PROOF_HEADER] = healthProof(
      ctx.proofToken,
      req.socket.localAddress ?? '',
      req.socket.localPort ?? 0,
      challenge,
    );
  // A challenge alone (no credential) gets only the proof: the window sends the token after it checked it.
  if (challenge && presentedCredential(req) === undefined)
    return { loopgate: version, requireToken: ctx.token !== null } satisfies HealthChallengeAnswer;
  checkToken(req, ctx, 'loopgate-api');
  return {
    loopgate: version,
    pid: process.pid,
    siteUrl: ctx.siteUrl,
    baseUrl: ctx.baseUrl,
    simulator: ctx.simulator,
    hasKey: ctx.keys.slots.length > 0,
    // Names and fingerprints only: which keys, how many models each, or why its list fails.
    keys: keySummary(ctx),
    requireToken: ctx.token !== null,
    // Lost records are never silent: a window or a script can see the log is failing.
    log: ctx.log ? ctx.log.health : null,
    // The same for the OTLP export: where spans go, how many were accepted and how many dropped.
    otlp: ctx.otlp ? ctx.otlp.health : null,
    // The live traffic ring: how much it holds, its limits; null with --no-capture.
    capture: ctx.ring ? ctx.ring.stats() : null,
  } satisfies HealthAnswer;
}

function statsAnswer(ctx: Pick<ProxyContext, 'stats' | 'log' | 'otlp'>): StatsAnswer {
  return {
    ...ctx.stats,
    logFile: ctx.log?.file,
    logDropped: ctx.log?.dropped ?? 0,
    logOk: ctx.log?.health.ok ?? null,
    otlpExported: ctx.otlp?.health.exported ?? null,
    otlpDropped: ctx.otlp?.health.dropped ?? null,
  } satisfies StatsAnswer;
}

/** Each key's own list, for the editor's Model Explorer (grouped by key): names and models, never a key. */
async function keysAnswer(ctx: Pick<ProxyContext, 'keys' | 'bridge'>): Promise<KeysAnswer> {
  if (ctx.keys.slots.some((s) => s.models.ids() === undefined)) await ctx.keys.refresh();
  return {
    keys: ctx.keys.slots.map((s) => ({
      name: s.name,
      fingerprint: s.fingerprint,
      failure: s.models.failure() ?? null,
      models: s.models.entries() ? [...s.models.entries()!.values()] : null,
    })),
    // With the lists, all else the routing rule (rules/keys/key-routing.ts) reads, so a reader decides as the proxy does.
    bridge: ctx.bridge.mode,
    refused: ctx.bridge.current(),
    now: ctx.bridge.now(),
  } satisfies KeysAnswer;
}
