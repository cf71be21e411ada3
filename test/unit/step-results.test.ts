// Who may write a request's state (proxy/pipeline/exchange.ts): the steps
// return their results; only the sequencers (handle.ts, upgrade.ts and its ws-turns.ts) keep them,
// and only the reply (client-reply.ts) writes what was sent to the client.
// Admission (admission.ts) is one step both sequencers call.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');
const pipeline = readdirSync(join(root, 'proxy', 'pipeline'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: `proxy/pipeline/${f}`, text: readFileSync(join(root, 'proxy', 'pipeline', f), 'utf8') }));
/** `x as unknown as T`, `x as Omit<T, 'k'> as T`. */
const DOUBLE_CAST = /\bas\s+(unknown|[A-Z][\w<>[\]., '"|]*)\s+as\s+[A-Z]/;
// ws-turns.ts is the WebSocket sequencer's per-turn half (each response.create on the socket is a request of its own).
const SEQUENCERS = new Set(['proxy/pipeline/handle.ts', 'proxy/pipeline/upgrade.ts', 'proxy/pipeline/ws-turns.ts']);

/** Lines of `text` that match `pattern`, as `file:line: text`. */
function lines(files: typeof pipeline, pattern: RegExp): string[] {
  return files.flatMap(({ file, text }) =>
    text.split('\n').flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('step results', () => {
  it('finds the pipeline it checks', () => {
    expect(pipeline.map((f) => f.file)).toEqual(
      expect.arrayContaining(['proxy/pipeline/handle.ts', 'proxy/pipeline/relay.ts', 'proxy/pipeline/client-reply.ts']),
    );
  });

  it('lets only the sequencers hold the writable RequestFacts (the steps get the readonly RequestSoFar)', () => {
    const others = pipeline.filter((f) => !SEQUENCERS.has(f.file) && f.file !== 'proxy/pipeline/exchange.ts');
    expect(
      lines(others, /\bRequestFacts\b|\b(startFacts|tookAttempt)\(/).filter((l) => !/^\S+:\d+: \/\//.test(l)),
    ).toEqual([]);
  });

  it('lets nothing outside the reply assign its fields or feed its capture', () => {
    const others = pipeline.filter((f) => f.file !== 'proxy/pipeline/client-reply.ts');
    expect(lines(others, /\breply\.\w+\s*(\+|-|\?\?)?=[^=]|\.capture\.(add|reset)\(/)).toEqual([]);
  });

  it('builds the request state without a double cast', () => {
    expect(lines(pipeline, DOUBLE_CAST)).toEqual([]);
  });

  it('runs admission in one place: the guard, normalise, the in-flight cap and the /v1/ scope only in admission.ts', () => {
    const others = pipeline.filter((f) => f.file !== 'proxy/pipeline/admission.ts');
    expect(
      lines(others, /\b(checkRequest|normaliseRequestPath)\(|'(too-many-requests|not-an-api-path)'/).filter(
        (l) => !/: export function /.test(l),
      ),
    ).toEqual([]);
  });

  it('the checks above can fail', () => {
    const sample = [
      {
        file: 'x.ts',
        text: 'ex.reply.local = {};\nconst ex = {} as Omit<Exchange, "reply"> as Exchange;\nfunction f(x: RequestFacts) {}',
      },
    ];
    expect(lines(sample, /\breply\.\w+\s*(\+|-|\?\?)?=[^=]/)).toHaveLength(1);
    expect(lines(sample, DOUBLE_CAST)).toHaveLength(1);
    expect(lines(sample, /\bRequestFacts\b|\b(startFacts|tookAttempt)\(/)).toHaveLength(1);
  });
});
