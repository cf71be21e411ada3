// Conformance matrix of the client libraries real users point at Loopgate: each one
// runs, unmodified, through the REAL proxy in front of the REAL simulator, in the
// Node it needs (the project's Node 20, or the Node 24 that
// scripts/provision-clients.mjs provisions for the Node >= 22 libraries).
//
// Per client: (a) plain text, non-stream and stream; (b) a function-tool round trip;
// (c) a broken base URL the proxy rewrites; (d) the same text bridged over the
// chat-only key (Responses and Anthropic clients); (e) the traffic log holds a record
// for every request and neither the real key nor the local token.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../proxy/stack.js';
import { assertNoCanary } from '../log/canary.js';
import {
  CaseFailed,
  installedVersion,
  repoRoot,
  node20,
  provisionNode24,
  startClientStack,
  startRunner,
  type CaseResult,
  type ClientStack,
  type ProxyName,
  type Runner,
  type Runtime,
  type SeenRequest,
} from './harness.js';
import {
  endpointFor,
  isBridged,
  isStream,
  isTool,
  MATRIX,
  proxyFor,
  TOOL_ARGS,
  TOOL_PROMPT,
  TOOL_RESULT,
  type CaseName,
  type ClientSpec,
} from './matrix.js';

const CASE_TIMEOUT_MS = 15_000;

// Provisioned (or found cached) at collection time, so the rows can name their versions.
const node24 = provisionNode24();
const runtimes: Partial<Record<Runtime['name'], Runtime>> = { node20, ...(node24 ? { node24 } : {}) };

let stack: ClientStack;
const runners: Partial<Record<Runtime['name'], Runner>> = {};
/** Every request any client sent, per proxy, for the final log check. */
const sent: Array<{ proxy: ProxyName; method: string; path: string }> = [];

beforeAll(async () => {
  stack = await startClientStack();
  await Promise.all(
    Object.values(runtimes).map(async (rt) => {
      runners[rt.name] = await startRunner(rt);
    }),
  );
}, 60_000);

afterAll(async () => {
  for (const r of Object.values(runners)) r?.close();
  await stack?.close();
});

function proxyOf(url: string): ProxyName {
  const port = Number(new URL(url).port);
  const name = (Object.keys(stack.proxies) as ProxyName[]).find((p) => stack.proxies[p].port === port);
  if (!name) throw new Error(`request to ${url} went to no proxy of this test`);
  return name;
}

function remember(requests: SeenRequest[]): void {
  for (const r of requests) sent.push({ proxy: proxyOf(r.url), method: r.method, path: new URL(r.url).pathname });
}

function versionLabel(spec: ClientSpec): string {
  const rt = runtimes[spec.runtime];
  if (spec.packages.length === 0) return spec.label;
  const versions = spec.packages.map(
    (p) => `${p.replace('lc-openai-1-5', '@langchain/openai')}@${rt ? installedVersion(rt, p) : '?'}`,
  );
  return `${spec.label} [${versions.join(', ')}]`;
}

function promptFor(spec: ClientSpec, c: CaseName): string {
  return isTool(c) ? TOOL_PROMPT : `hello from ${spec.client} on ${spec.runtime} case ${c}`;
}

/** Runs one case and checks what every client must satisfy; returns the result for the case-specific checks. */
async function runCase(spec: ClientSpec, c: CaseName): Promise<{ result: CaseResult; prompt: string }> {
  const runner = runners[spec.runtime];
  if (!runner) throw new Error(`no runner for ${spec.runtime}`);
  const prompt = promptFor(spec, c);
  const trafficStart = stack.traffic.length;
  const simStart = stack.sim.requests.length;
  let result: CaseResult;
  try {
    result = await runner.run(spec.client, c, {
      proxies: {
        default: stack.proxies.default.url,
        claude: stack.proxies.claude.url,
        chatOnly: stack.proxies.chatOnly.url,
      },
      token: stack.token,
      model: spec.model,
      prompt,
      timeoutMs: CASE_TIMEOUT_MS,
    });
  } catch (err) {
    if (err instanceof CaseFailed) {
      remember(err.requests);
      const seen = err.requests.map((r) => `${r.method} ${r.url} -> ${r.status}`).join('\n');
      // The proxy's console lines for this case carry the diagnosis and the upstream's error.
      await until(
        () => stack.traffic.length - trafficStart >= err.requests.length || undefined,
        5000,
        'traffic records',
      ).catch(() => undefined);
      const lines = stack.traffic
        .slice(trafficStart)
        .map((t) => t.line)
        .join('\n');
      throw new Error(`${err.message}\nrequests:\n${seen}\nproxy lines:\n${lines}`);
    }
    throw err;
  }
  remember(result.requests);

  // Only the local proxy was contacted, on the proxy this case is about, and every request succeeded.
  expect(result.external).toEqual([]);
  expect(result.requests.length).toBeGreaterThan(0);
  const proxy = proxyFor(spec, c);
  for (const r of result.requests) {
    expect(proxyOf(r.url), r.url).toBe(proxy);
    expect(r.status, `${r.method} ${r.url}`).toBe(200);
  }
  if (isTool(c)) expect(result.requests.length).toBeGreaterThanOrEqual(2);

  // The proxy logged each request once, on the endpoint the client speaks, with the right stream flag.
  await until(
    () => stack.traffic.length - trafficStart >= result.requests.length || undefined,
    5000,
    `${result.requests.length} traffic records`,
  );
  const records = stack.traffic.slice(trafficStart);
  expect(records.map((t) => t.proxy)).toEqual(result.requests.map(() => proxy));
  expect(records.map((t) => t.record.path.split('?')[0]).sort()).toEqual(
    result.requests.map((r) => new URL(r.url).pathname).sort(),
  );
  const endpoint = endpointFor(spec, c);
  for (const { record } of records) {
    // canonicalPath is what went upstream: the client's endpoint, or chat when bridged.
    expect(record.canonicalPath.split('?')[0]).toBe(isBridged(c) ? '/v1/chat/completions' : endpoint);
    if (c !== 'brokenBase') expect(record.path.split('?')[0]).toBe(endpoint);
    expect(record.status).toBe(200);
    expect(record.clientAborted).toBe(false);
  }
  if (isStream(c)) {
    expect(records.every((t) => t.record.stream === true)).toBe(true);
    expect(result.requests.every((r) => r.contentType?.startsWith('text/event-stream'))).toBe(true);
  } else {
    expect(records.every((t) => t.record.stream !== true)).toBe(true);
  }

  // Upstream: one request per client request; bridged ones arrive as Chat Completions.
  const upstream = stack.sim.requests.slice(simStart);
  expect(upstream.map((q) => q.path.split('?')[0])).toEqual(records.map((t) => t.record.canonicalPath.split('?')[0]));
  if (isBridged(c)) {
    const bridge = endpoint === '/v1/messages' ? 'messages->chat' : 'responses->chat';
    for (const r of result.requests) expect(r.bridge).toBe(bridge);
    for (const { record } of records) expect(record.bridge).toBe(bridge);
  } else {
    for (const r of result.requests) expect(r.bridge).toBeNull();
  }

  // A broken base reached the proxy as sent and was rewritten (header + log); a good one was not.
  if (c === 'brokenBase') {
    for (const r of result.requests) expect(r.rewrite, r.url).toMatch(/ -> /);
    for (const { record } of records) {
      expect(record.rewrites.length).toBeGreaterThan(0);
      expect(record.path.split('?')[0]).not.toBe(record.canonicalPath.split('?')[0]);
    }
  } else {
    for (const r of result.requests) expect(r.rewrite, r.url).toBeNull();
    for (const { record } of records) expect(record.rewrites).toEqual([]);
  }
  return { result, prompt };
}

const CHECKS: Record<CaseName, (spec: ClientSpec, result: CaseResult, prompt: string) => void> = {
  text: (_s, r, p) => expect(r.text).toBe(`Echo: ${p}`),
  messages: (_s, r, p) => expect(r.text).toBe(`Echo: ${p}`),
  brokenBase: (_s, r, p) => expect(r.text).toBe(`Echo: ${p}`),
  bridged: (_s, r, p) => expect(r.text).toBe(`Echo: ${p}`),
  stream(spec, r, p) {
    expect(r.text).toBe(`Echo: ${p}`);
    // The simulator sends five text chunks: the client saw them as they came, not as one buffered piece.
    expect(r.chunks).toBeGreaterThan(1);
    if (spec.client === 'curl') expect(r.sawDone).toBe(true);
  },
  bridgedStream(_s, r, p) {
    expect(r.text).toBe(`Echo: ${p}`);
    expect(r.chunks).toBeGreaterThan(1);
  },
  tool: checkTool,
  toolStream: checkTool,
  bridgedTool: checkTool,
};

function checkTool(_spec: ClientSpec, r: CaseResult): void {
  // The simulator called the named tool with arguments from the prompt; the client ran it
  // locally, sent the result back, and the final reply echoes that result.
  expect(r.toolCalls).toEqual([{ name: 'get_weather', args: TOOL_ARGS }]);
  expect(r.text).toMatch(/^Echo: tool result: /);
  expect(r.text).toContain(TOOL_RESULT);
}

describe('library clients through the real proxy (conformance matrix)', () => {
  it('runs each client in the Node it declares and at the pinned versions', () => {
    expect(runners.node20!.node).toBe(process.version);
    const root = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    for (const p of [
      'ai',
      '@ai-sdk/openai',
      '@ai-sdk/openai-compatible',
      '@ai-sdk/anthropic',
      '@openai/agents',
      'zod',
    ]) {
      expect(installedVersion(node20, p), p).toBe(root.devDependencies[p]);
    }
    expect(installedVersion(node20, 'ai')).toMatch(/^6\./);
    expect(installedVersion(node20, '@openai/agents')).toMatch(/^0\.14\./);
    if (node24) {
      expect(runners.node24!.node).toMatch(/^v24\./);
      expect(installedVersion(node24, 'ai')).toMatch(/^7\./);
      expect(installedVersion(node24, 'lc-openai-1-5')).toMatch(/^1\.5\./);
      expect(installedVersion(node24, '@langchain/openai')).toMatch(/^1\.6\./);
      expect(installedVersion(node24, '@openai/agents')).toMatch(/^0\.20\./);
    }
  });

  for (const spec of MATRIX) {
    const available = runtimes[spec.runtime] !== undefined;
    describe.skipIf(!available)(`${versionLabel(spec)} on ${spec.runtime}`, () => {
      for (const c of spec.cases) {
        it(
          c,
          async () => {
            const { result, prompt } = await runCase(spec, c);
            CHECKS[c](spec, result, prompt);
          },
          CASE_TIMEOUT_MS + 10_000,
        );
      }
    });
  }

  describe('traffic log after the run', () => {
    it('holds one record per request in the JSONL file and on the console, and neither key nor token', async () => {
      expect(sent.length).toBeGreaterThan(0);
      const secrets = [...Object.values(stack.keys), stack.token];
      for (const proxy of Object.keys(stack.proxies) as ProxyName[]) {
        const mine = sent.filter((s) => s.proxy === proxy);
        const console = stack.traffic.filter((t) => t.proxy === proxy);
        expect(console.length, `console records of ${proxy}`).toBe(mine.length);
        // The file is written asynchronously: poll until every record is there.
        const text = await until(
          () => {
            const t = readFileSync(stack.logFiles[proxy], 'utf8');
            // Whole lines only: the last one may be half written.
            return t.endsWith('\n') && t.split('\n').filter(Boolean).length >= mine.length ? t : undefined;
          },
          5000,
          `${mine.length} lines in the ${proxy} log`,
        );
        const lines = text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { id: string; path: string; method: string });
        expect(lines.length).toBe(mine.length);
        expect(new Set(lines.map((l) => l.id)).size).toBe(lines.length);
        expect(lines.map((l) => `${l.method} ${l.path.split('?')[0]}`).sort()).toEqual(
          mine.map((m) => `${m.method} ${m.path}`).sort(),
        );
        expect(lines.map((l) => l.id).sort()).toEqual(console.map((t) => t.record.id).sort());
        assertNoCanary(text, secrets);
        assertNoCanary(console.map((t) => t.line).join('\n'), secrets);
      }
      assertNoCanary(stack.hints.join('\n'), secrets);
    });
  });
});
