// The fault rules over HTTP (issue 34 §2), under the local token like every /_loopgate/ endpoint:
//   GET    /_loopgate/faults        the rules armed (spent ones too) and the report (FaultsAnswer)
//   POST   /_loopgate/faults        {"rule": "429 times=2", "times"?: N, "source"?: ...}: arm one (FaultArmAnswer)
//   DELETE /_loopgate/faults        disarm all; DELETE /_loopgate/faults/<id>: one (FaultDisarmAnswer)
import type { IncomingMessage } from 'node:http';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { parseFaultRule } from '../../rules/faults/fault-rules.js';
import type { FaultSource, FaultVerdict } from '../../core/fault.js';
import type { ProxyContext } from './context.js';
import type { PathFacts } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import type { ReaderScope } from './reader-scope.js';
import {
  LOCAL_ERROR_CODES,
  LOCAL_PATHS,
  type FaultArmAnswer,
  type FaultArmRequest,
  type FaultDisarmAnswer,
  type FaultsAnswer,
} from '../../core/local-api.js';

const FAULTS_PATH = LOCAL_PATHS.faults;
/** A rule is one line: a body past this is no arming request. */
const MAX_BODY_BYTES = 16 * 1024;
const SOURCES: readonly FaultSource[] = ['cli', 'config', 'editor', 'api'];
const EXAMPLE = '{"rule": "429 times=2 retry-after=2"}';

export function isFaultEndpoint(path: string): boolean {
  return path === FAULTS_PATH || path.startsWith(FAULTS_PATH + '/');
}

/**
 * What the client did after each injected fault, for GET <faults>, oldest first: worked out now from the ring's
 * entries since the last ask (traffic/fault-ledger.ts, rules/faults/fault-report.ts). Nothing without the ring.
 */
function faultReport(ctx: Pick<ProxyContext, 'faultLedger'>): FaultVerdict[] {
  return ctx.faultLedger?.report() ?? [];
}

export async function handleFaults(
  req: IncomingMessage,
  paths: PathFacts,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'faults' | 'faultLedger'>,
  scope?: ReaderScope,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (paths.path !== FAULTS_PATH) {
    if (method !== 'DELETE')
      throw new ProxyError(405, LOCAL_ERROR_CODES.methodNotAllowed, `${paths.path} takes DELETE (disarm that rule).`, {
        allow: 'DELETE',
      });
    const raw = paths.path.slice(FAULTS_PATH.length + 1);
    const id = /^\d{1,9}$/.test(raw) ? Number(raw) : undefined;
    if (id === undefined || ctx.faults.disarm(id) === 0)
      throw new ProxyError(
        404,
        LOCAL_ERROR_CODES.unknownFault,
        `No armed fault rule ${JSON.stringify(raw.slice(0, 40))}: GET ${FAULTS_PATH} lists the rules and their ids.`,
      );
    return answer(reply, { disarmed: 1 } satisfies FaultDisarmAnswer);
  }
  switch (method) {
    case 'GET':
      // A run's credential reads the report on its own sessions' requests (the rules armed are the proxy's, for all).
      return answer(reply, {
        armed: ctx.faults.list(),
        report: faultReport(ctx).filter((v) => !scope || scope.sees(v.session)),
      } satisfies FaultsAnswer);
    case 'DELETE':
      return answer(reply, { disarmed: ctx.faults.disarm() } satisfies FaultDisarmAnswer);
    case 'POST': {
      const arm = parseArmRequest(await readSmallBody(req));
      const parsed = parseFaultRule(arm.rule);
      if (!parsed.ok) throw new ProxyError(400, LOCAL_ERROR_CODES.badFaultRule, parsed.problem, {});
      const armed = ctx.faults.arm(parsed.rule, arm.source ?? 'api', arm.times);
      return answer(reply, { armed } satisfies FaultArmAnswer);
    }
    default:
      throw new ProxyError(
        405,
        LOCAL_ERROR_CODES.methodNotAllowed,
        `${FAULTS_PATH} takes GET (list), POST (arm) or DELETE (disarm all).`,
        { allow: 'GET, POST, DELETE' },
      );
  }
}

function answer(reply: ClientReply, payload: unknown): void {
  reply.answer(200, 'application/json', JSON.stringify(payload));
}

function badBody(why: string): ProxyError {
  return new ProxyError(400, LOCAL_ERROR_CODES.badBody, `${why} Send JSON like ${EXAMPLE}.`);
}

function parseArmRequest(text: string): FaultArmRequest {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw badBody('The body is not JSON.');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badBody('The body must be a JSON object.');
  const o = v as Record<string, unknown>;
  if (typeof o.rule !== 'string' || o.rule.trim() === '') throw badBody('"rule" (a --fault rule, text) is missing.');
  if (o.times !== undefined && (!Number.isInteger(o.times) || (o.times as number) < 1 || (o.times as number) > 1e6))
    throw badBody('"times" must be a whole number from 1 to 1000000.');
  if (o.source !== undefined && !SOURCES.includes(o.source as FaultSource))
    throw badBody(`"source" is one of ${SOURCES.join(', ')}.`);
  return {
    rule: o.rule,
    ...(o.times !== undefined ? { times: o.times as number } : {}),
    ...(o.source !== undefined ? { source: o.source as FaultSource } : {}),
  };
}

/** The whole body, refused past MAX_BODY_BYTES (413). */
function readSmallBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        reject(
          new ProxyError(413, LOCAL_ERROR_CODES.badBody, `The body is larger than ${MAX_BODY_BYTES} bytes. ${EXAMPLE}`),
        );
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
