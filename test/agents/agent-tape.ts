// The first tier's agent suites replay what the real agents sent (issue 41, "Tiers"). A suite's recording,
// under test/fixtures/agent-cassettes/<suite>/, is two halves made in one live run
// (`node scripts/record-agent-cassettes.mjs`):
// - <proxy>/NNNN-*.json: what each proxy's upstream answered, a cassette as `serve --record DIR` writes it;
// - client.json: what the agent sent each proxy, case by case, in order: method, path, headers and body of each
//   request, and for a WebSocket its upgrade's headers and every message it sent on it.
// Both halves come from the proxy's traffic ring, so both went through the redactor; the recorder checks them
// for the run's keys and token before it writes.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { CassetteExchange } from '../../core/cassette.js';
import type { TrafficRecord } from '../../core/record.js';
import type { RunningProxy } from '../../proxy/server.js';
import { assertNoCanary } from '../log/canary.js';
import { repoRoot } from '../clients/harness.js';

export const AGENT_CASSETTES = join(repoRoot, 'test', 'fixtures', 'agent-cassettes');

/** One request as the agent sent it (redacted: a credential header holds a redaction tag). */
export interface TapeRequest {
  proxy: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The body as text (HTTP), absent when there was none. */
  body?: string;
  /** A WebSocket: each message the client sent on it, in order. */
  messages?: string[];
  /**
   * The `loopgate run` that started the agent, when its credential was a run's (rules/run-credential.ts): the
   * replay mints the same run's credential for its own token, so the proxy groups by run as it did.
   */
  run?: { tool: string; started: string };
}

export interface Tape {
  'loopgate-agent-tape': 1;
  recorded: string;
  /** The agents' versions the tape was recorded from. */
  versions: Record<string, string>;
  cases: Record<string, TapeRequest[]>;
}

/** The suite's fixture folder, and a proxy's cassette in it. */
function suiteDir(suite: string): string {
  return join(AGENT_CASSETTES, suite);
}
export function cassetteDir(suite: string, proxy: string): string {
  return join(suiteDir(suite), proxy);
}

/** Set by scripts/record-agent-cassettes.mjs: the live suites write their recordings. */
const recordingAgentCassettes = process.env.LOOPGATE_RECORD_AGENT_CASSETTES === '1';

export function readTape(suite: string): Tape {
  return JSON.parse(readFileSync(join(suiteDir(suite), 'client.json'), 'utf8')) as Tape;
}

interface TapeStack {
  proxies: Record<string, RunningProxy>;
  traffic: Array<{ proxy: string; record: Readonly<TrafficRecord> }>;
  keys: Record<string, string>;
  token: string;
}

/**
 * A live suite's recorder: `take(name, before)` keeps what the agent sent in a case (the records after `before`,
 * by arrival), `save()` writes client.json. Both do nothing unless recording.
 */
export class TapeRecorder {
  private readonly cases: Record<string, TapeRequest[]> = {};
  /** The bodies that went upstream translated by the bridge: their cassette exchanges are not shortened. */
  private readonly keepWhole = new Set<string>();

  constructor(
    readonly suite: string,
    private readonly versions: () => Record<string, string>,
  ) {
    // A recording starts from an empty folder: the cassette files are numbered after what is there.
    if (recordingAgentCassettes) {
      rmSync(suiteDir(suite), { recursive: true, force: true });
      mkdirSync(suiteDir(suite), { recursive: true });
    }
  }

  /**
   * Asks each proxy for the upstream's model list once, through the proxy, so the cassette holds it: a replay
   * answers the proxy's own start-up `/models` call from it (a chat-only group stays chat-only, and is bridged).
   */
  async recordModelLists(stack: TapeStack): Promise<void> {
    if (!recordingAgentCassettes) return;
    for (const proxy of Object.values(stack.proxies)) {
      const res = await fetch(`${proxy.url}/v1/models`, { headers: { authorization: `Bearer ${stack.token}` } });
      if (!res.ok) throw new Error(`tape ${this.suite}: GET /v1/models answered ${res.status}`);
      await res.arrayBuffer();
    }
  }

  /** Each proxy's `recordDir` while recording, else nothing. */
  recordDir(proxy: string): { recordDir?: string } {
    return recordingAgentCassettes ? { recordDir: cassetteDir(this.suite, proxy) } : {};
  }

  take(stack: TapeStack, name: string, before: number): void {
    if (!recordingAgentCassettes) return;
    if (this.cases[name]) throw new Error(`tape ${this.suite}: case "${name}" taken twice`);
    const taken = stack.traffic
      .slice(before)
      .map((t, i) => ({ ...t, i }))
      .sort((a, b) => a.record.time.localeCompare(b.record.time) || a.i - b.i);
    this.cases[name] = taken.map(({ proxy, record }) => {
      const entry = stack.proxies[proxy]!.traffic?.get(record.id);
      if (!entry) throw new Error(`tape ${this.suite}: ${record.id} is no longer in ${proxy}'s traffic ring`);
      if (entry.requestBodyNote) throw new Error(`tape ${this.suite}: ${record.id}'s body was not kept whole`);
      const req: TapeRequest = {
        proxy,
        method: record.method,
        path: record.path,
        headers: record.requestHeaders ?? {},
      };
      if (record.session?.run) req.run = { ...record.session.run };
      const body = entry.requestBody ?? '';
      // A bridged request stays whole on both sides: the bridge joins and splits text (a system prompt's parts into
      // one message), so a cut on the client's side would not be the same cut on the upstream's.
      const cut = record.bridge ? (t: string) => t : shortenedJson;
      if (entry.upstreamRequestBody) this.keepWhole.add(canonicalJson(entry.upstreamRequestBody));
      const lines = body.split('\n').filter((l) => l !== '');
      if (record.websocket) req.messages = lines.map(cut);
      else if (body !== '') req.body = cut(body);
      return req;
    });
  }

  save(stack: TapeStack): void {
    if (!recordingAgentCassettes) return;
    const tape: Tape = {
      'loopgate-agent-tape': 1,
      recorded: new Date().toISOString(),
      versions: this.versions(),
      cases: this.cases,
    };
    const text = JSON.stringify(tape, null, 2) + '\n';
    // The canary check before anything is written: no key the proxies held, no local token.
    const secrets = [...Object.values(stack.keys), stack.token];
    assertNoCanary(text, secrets);
    writeFileSync(join(suiteDir(this.suite), 'client.json'), text);
    for (const proxy of Object.keys(stack.proxies)) shortenCassette(cassetteDir(this.suite, proxy), this.keepWhole);
    // The cassettes the proxies wrote: the same check, file by file (a leak is removed with its folder).
    for (const proxy of Object.keys(stack.proxies)) {
      const dir = cassetteDir(this.suite, proxy);
      let files: string[] = [];
      try {
        files = readdirSync(dir);
      } catch {
        continue; // this proxy saw no upstream exchange
      }
      for (const f of files) {
        try {
          assertNoCanary(readFileSync(join(dir, f), 'utf8'), secrets);
        } catch (err) {
          rmSync(suiteDir(this.suite), { recursive: true, force: true });
          throw new Error(`tape ${this.suite}: ${proxy}/${f}: ${(err as Error).message}`);
        }
      }
    }
  }
}

/** A string longer than this (an agent's system prompt, a tool's description) is kept as its head and a hash. */
const LONG = 1024;

/**
 * A request's long strings shortened to a head, their length and a hash: the same rule on the client's body and
 * the body that went upstream, so a replayed request still matches its recording (the player keys a recording by
 * its body when it loads it), and a suite's recording stays small. The proxy reads none of what is cut.
 */
function shorten(value: unknown, depth = 0): unknown {
  if (typeof value === 'string' && value.length > LONG)
    return `${value.slice(0, 160)}… [${value.length} chars, sha256 ${createHash('sha256').update(value).digest('hex').slice(0, 12)}]`;
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => shorten(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v, depth + 1)]));
}

/** JSON text as one line, to compare a ring entry's body with a cassette's (parsed from the same text). */
function canonicalJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

/** JSON text with its long strings shortened; any other text as it is. */
function shortenedJson(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    const short = JSON.stringify(shorten(parsed));
    return short === JSON.stringify(parsed) ? text : short;
  } catch {
    return text;
  }
}

/** The same rule on every recorded request of a cassette: its body, and a WebSocket's client messages. */
function shortenCassette(dir: string, keepWhole: ReadonlySet<string>): void {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return;
  }
  for (const f of files) {
    const path = join(dir, f);
    const x = JSON.parse(readFileSync(path, 'utf8')) as CassetteExchange;
    if (x.request.body !== undefined && !keepWhole.has(JSON.stringify(x.request.body)))
      x.request.body = shorten(x.request.body);
    for (const e of x.response.events ?? []) if (e.from === 'client') e.data = shortenedJson(e.data);
    writeFileSync(path, JSON.stringify(x, null, 2) + '\n');
  }
}
