// `loopgate doctor`: the recommended first-use order (the URL's form, the
// key, GET /models, then Responses with Chat Completions as its fallback, then
// Anthropic Messages), run against the configured upstream with minimal
// requests, each failing step explained with the error table (diagnose).
import { request } from 'undici';
import { checkApiKey } from '../rules/redaction/api-key.js';
import { parseUpstream } from '../rules/addresses/urls.js';
import { diagnose, parseErrorBody } from '../rules/diagnosis/diagnose.js';
import { parseModelList } from '../rules/wire/model-list.js';
import {
  ANTHROPIC_VERSION,
  BRIDGE_TARGET,
  MODELS_PATH,
  PROTOCOL_TABLE,
  minimalRequest,
  streamCompleted,
  type Protocol,
} from '../rules/protocols/index.js';
import { commandLine } from '../rules/project/command-line.js';
import { printable } from '../rules/terminal/printable.js';
import { type ModelEntry } from '../core/routing-facts.js';

export type StepResult = 'ok' | 'warn' | 'fail' | 'skip';

export interface DoctorStep {
  name: string;
  result: StepResult;
  detail: string;
  status?: number;
  diagnosis?: string;
}

export interface DoctorReport {
  ok: boolean;
  siteUrl?: string;
  baseUrl?: string;
  steps: DoctorStep[];
  /** The key's GET /models list, when it answered with one (for the routing matrix of several keys). */
  models?: ModelEntry[];
}

export interface DoctorOptions {
  upstream: string;
  key?: string;
  allowHttp?: boolean;
  timeoutMs?: number;
}

interface Probe {
  status: number;
  text: string;
  requestId?: string;
  error?: string;
}

async function call(
  url: string,
  key: string,
  method: 'GET' | 'POST',
  body: unknown,
  timeoutMs: number,
  anthropic = false,
): Promise<Probe> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'accept-encoding': 'identity' };
  if (anthropic) {
    headers['x-api-key'] = key;
    headers['anthropic-version'] = ANTHROPIC_VERSION;
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await request(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await res.body.text();
    const id = res.headers['x-oneapi-request-id'];
    return { status: res.statusCode, text, requestId: typeof id === 'string' ? id : undefined };
  } catch (err) {
    return { status: 0, text: '', error: (err as { code?: string }).code ?? (err as Error).message };
  }
}

function failure(name: string, probe: Probe, path: string, model?: string, known?: string[]): DoctorStep {
  if (probe.status === 0)
    return { name, result: 'fail', detail: `no answer (${probe.error}): check the URL and the network` };
  const info = parseErrorBody(probe.status, probe.text);
  const d = diagnose(info, {
    method: 'POST',
    originalPath: path,
    canonicalPath: path,
    model,
    knownModels: known,
    upstreamRequestId: probe.requestId,
    time: new Date(),
  });
  return {
    name,
    result: 'fail',
    status: probe.status,
    diagnosis: d?.code,
    detail: `${probe.status}${info.code ? ` ${info.code}` : ''}: ${d?.hint ?? 'unexpected answer'}`,
  };
}

/** Doctor's one user message: as short as a request gets. */
const PROMPT = 'ping';

/** Where the probes go, and with which key: what steps 1 and 2 establish. */
interface Target {
  site: { siteUrl: string; baseUrl: string };
  key: string;
  timeout: number;
}

export async function runDoctor(opts: DoctorOptions): Promise<DoctorReport> {
  const steps: DoctorStep[] = [];
  const finish = (extra: Partial<DoctorReport> = {}): DoctorReport => ({
    ok: !steps.some((s) => s.result === 'fail'),
    steps,
    ...extra,
  });
  const site = checkUrl(opts, steps);
  if (!site) return finish();
  const key = checkKey(opts.key, steps);
  if (!key) return finish(site);
  const target: Target = { site, key, timeout: opts.timeoutMs ?? 60_000 };
  const models = await listModels(target, steps);
  if (!models) return finish(site);
  await probeOpenAiProtocols(target, models, steps);
  await probeMessages(target, models, steps);
  return finish({ ...site, models });
}

/** Step 1: the URL's form, and the site_url and base_url split from it. */
function checkUrl(opts: DoctorOptions, steps: DoctorStep[]): Target['site'] | undefined {
  const parsed = parseUpstream(opts.upstream, { allowHttp: opts.allowHttp });
  if (!parsed.ok) {
    steps.push({ name: '1. URL form', result: 'fail', detail: parsed.problems.map((p) => p.message).join(' ') });
    return undefined;
  }
  const notes = parsed.problems.map((p) => p.message).join(' ');
  steps.push({
    name: '1. URL form',
    result: notes ? 'warn' : 'ok',
    detail: `site_url ${parsed.siteUrl}, base_url ${parsed.baseUrl}${notes ? `. ${notes}` : ''}`,
  });
  return { siteUrl: parsed.siteUrl, baseUrl: parsed.baseUrl };
}

/** Step 2: a key is there and has the form of one (never shown, only its length). */
function checkKey(raw: string | undefined, steps: DoctorStep[]): string | undefined {
  if (!raw?.trim()) {
    steps.push({
      name: '2. API key',
      result: 'fail',
      detail: 'No key. Set LOOPGATE_API_KEY or use --key-stdin (VS Code: Loopgate: Set API Key).',
    });
    return undefined;
  }
  const checked = checkApiKey(raw);
  if ('problem' in checked) {
    const capital = checked.problem[0]!.toUpperCase() + checked.problem.slice(1);
    steps.push({
      name: '2. API key',
      result: 'fail',
      detail: `${capital}. Loopgate adds "Authorization: Bearer" itself.`,
    });
    return undefined;
  }
  steps.push({ name: '2. API key', result: 'ok', detail: `present (${checked.key.length} characters)` });
  return checked.key;
}

/** Step 3: GET /models answers a non-empty model list. */
async function listModels(t: Target, steps: DoctorStep[]): Promise<ModelEntry[] | undefined> {
  const probe = await call(`${t.site.baseUrl}/models`, t.key, 'GET', undefined, t.timeout);
  if (probe.status !== 200) {
    steps.push(failure('3. GET /models', probe, MODELS_PATH));
    return undefined;
  }
  const list = parseModelList(probe.text);
  const problem = !list.ok
    ? 'The answer is not a JSON model list: is the URL the Model-Access API?'
    : list.models.length === 0
      ? "The key's group has no models. Check the key's group in the console."
      : undefined;
  if (!list.ok || problem) {
    steps.push({ name: '3. GET /models', result: 'fail', status: 200, detail: problem! });
    return undefined;
  }
  const ids = list.models.map((m) => m.id);
  steps.push({
    name: '3. GET /models',
    result: 'ok',
    status: 200,
    detail: `${ids.length} models: ${ids.slice(0, 6).join(', ')}${ids.length > 6 ? ', …' : ''}`,
  });
  return list.models;
}

/** Step 4: Responses and Chat Completions, each plain and streamed, on a model that lists the endpoint type. */
async function probeOpenAiProtocols(t: Target, models: ModelEntry[], steps: DoctorStep[]): Promise<void> {
  const ids = models.map((m) => m.id);
  const pick = (type: string) =>
    models.find((m) => !m.supported_endpoint_types || m.supported_endpoint_types.includes(type));
  const results: Partial<Record<Protocol, StepResult[]>> = {};
  for (const kind of ['responses', 'chat'] as const) {
    const { endpoint, path, endpointType } = PROTOCOL_TABLE[kind];
    const model = pick(endpointType) ?? models[0]!;
    for (const stream of [false, true]) {
      const name = `4. POST ${endpoint} (stream ${stream})`;
      const body = minimalRequest(kind, model.id, { stream, prompt: PROMPT });
      const probe = await call(t.site.baseUrl + endpoint, t.key, 'POST', body, t.timeout);
      const step: DoctorStep =
        probe.status === 200 && (!stream || streamCompleted(kind, probe.text))
          ? { name, result: 'ok', status: 200, detail: `model ${model.id}` }
          : probe.status === 200
            ? {
                name,
                result: 'fail',
                status: 200,
                detail:
                  'The stream ended without its completion event: something between you and the service buffers or cuts streams.',
              }
            : failure(name, probe, path, model.id, ids);
      steps.push(step);
      (results[kind] ??= []).push(step.result);
    }
  }
  if ((results[BRIDGE_TARGET] ?? []).every((r) => r === 'ok')) softenChatOnlyRoute(steps);
}

/**
 * Responses failing while Chat Completions works is a property of the route
 * (its channels lack Responses), not a bad key: a warning, not a failure.
 */
function softenChatOnlyRoute(steps: DoctorStep[]): void {
  for (const step of steps) {
    if (
      step.name.includes(PROTOCOL_TABLE.responses.endpoint) &&
      step.result === 'fail' &&
      step.diagnosis === 'protocol-unsupported'
    ) {
      step.result = 'warn';
      step.detail = `${step.status}: this route has no ${PROTOCOL_TABLE.responses.title}; ${PROTOCOL_TABLE.chat.title} works, so the key is fine. Use ${PROTOCOL_TABLE.chat.endpoint}, or go through the Loopgate proxy: it serves ${PROTOCOL_TABLE.responses.title} over ${PROTOCOL_TABLE.chat.title} by default.`;
    }
  }
}

/** Step 5: Anthropic Messages at {site_url}, when a model of the group lists its endpoint type. */
async function probeMessages(t: Target, models: ModelEntry[], steps: DoctorStep[]): Promise<void> {
  const messages = PROTOCOL_TABLE.messages;
  const claude = models.find((m) => m.supported_endpoint_types?.includes(messages.endpointType));
  if (!claude) {
    steps.push({
      name: `5. POST {site_url}${messages.path}`,
      result: 'skip',
      detail: `no model in this key's group lists the ${messages.endpointType} endpoint type`,
    });
    return;
  }
  const ids = models.map((m) => m.id);
  for (const stream of [false, true]) {
    const name = `5. POST {site_url}${messages.path} (stream ${stream})`;
    const body = minimalRequest('messages', claude.id, { stream, prompt: PROMPT, maxTokens: 16 });
    const probe = await call(t.site.siteUrl + messages.path, t.key, 'POST', body, t.timeout, true);
    if (probe.status === 200 && (!stream || streamCompleted('messages', probe.text)))
      steps.push({ name, result: 'ok', status: 200, detail: `model ${claude.id}` });
    else if (probe.status === 200)
      steps.push({
        name,
        result: 'fail',
        status: 200,
        detail: `The stream ended without ${messages.stream.completed}.`,
      });
    else steps.push(failure(name, probe, messages.path, claude.id, ids));
  }
}

/** `cli`: how the user types the CLI here (cli/invocation.ts), and `rerun` the doctor command with its --port/--proxy, for the rerun hint. */
export function formatDoctorTable(report: DoctorReport, cli: string, rerun = 'doctor'): string {
  const width = Math.max(...report.steps.map((s) => s.name.length));
  // A detail quotes the upstream (model IDs, error messages): one line each, escaped.
  const lines = report.steps.map(
    (s) => `${s.name.padEnd(width)}  ${s.result.toUpperCase().padEnd(4)}  ${printable(s.detail)}`,
  );
  lines.push(
    '',
    report.ok
      ? 'All steps passed.'
      : `Some steps failed: fix the first failing step, then run \`${commandLine(cli, rerun)}\` again.`,
  );
  return lines.join('\n');
}

export function formatDoctorMarkdown(report: DoctorReport): string {
  const rows = report.steps.map((s) => `| ${s.name} | ${s.result} | ${s.detail.replace(/\|/g, '\\|')} |`);
  return [
    '# Loopgate diagnosis',
    '',
    report.siteUrl ? `Upstream site_url \`${report.siteUrl}\`, base_url \`${report.baseUrl}\`.` : '',
    '',
    '| Step | Result | Detail |',
    '|---|---|---|',
    ...rows,
    '',
    report.ok ? 'All steps passed.' : 'Some steps failed: fix the first failing step, then run the diagnosis again.',
  ].join('\n');
}
