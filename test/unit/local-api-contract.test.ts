// The Traffic view's row is made from ROW_FIELDS, the list of what the proxy
// sends with ?rows=1: a field the view reads but the proxy does not send must
// fail to compile (issue 32: the row used to be typed as a whole record, so such
// a field compiled and was always undefined). Planted files, compiled by tsc's API.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ROW_FIELDS, type RowField, type RowRecord, type TrafficRow } from '../../core/local-api.js';
import type { TrafficRecord } from '../../core/record.js';
import { type TrafficRow as ViewRow } from '../../core/local-api.js';

const root = join(__dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'loopgate-contract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** tsc's errors for each planted file that reads a Traffic view row: one program for all (lib is loaded once). */
function compile(bodies: string[]): string[][] {
  const contract = join(root, 'core/local-api.js');
  const files = bodies.map((body, i) => {
    const file = join(dir, `planted-${i}.ts`);
    writeFileSync(
      file,
      `import type { TrafficRow } from ${JSON.stringify(contract)};\nexport function read(row: TrafficRow): unknown {\n  ${body}\n}\n`,
    );
    return file;
  });
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: [],
    skipLibCheck: true,
  });
  return files.map((f) =>
    ts
      .getPreEmitDiagnostics(program, program.getSourceFile(f))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
  );
}

describe('the row type comes from ROW_FIELDS', () => {
  it('a field the proxy sends compiles; one it does not send (requestHeaders, bytesIn) does not', () => {
    const [sent, headers, bytes, whole] = compile([
      'return [row.record.status, row.record.model, row.record.usage?.input, row.seq];',
      'return row.record.requestHeaders;',
      'return row.record.bytesIn;',
      // A row is no whole record (the old type hole: the view typed it as one).
      `const whole: import(${JSON.stringify(join(root, 'core/record.js'))}).TrafficRecord = row.record; return whole;`,
    ]);
    expect(sent).toEqual([]);
    expect(headers).toEqual([expect.stringContaining("Property 'requestHeaders' does not exist")]);
    expect(bytes).toEqual([expect.stringContaining("Property 'bytesIn' does not exist")]);
    expect(whole).toHaveLength(1);
  }, 60_000);

  it('the view uses the contract row, whose keys are exactly ROW_FIELDS', () => {
    expectTypeOf<ViewRow>().toEqualTypeOf<TrafficRow>();
    expectTypeOf<keyof RowRecord>().toEqualTypeOf<RowField>();
    expectTypeOf<RowRecord>().not.toHaveProperty('requestHeaders');
    expectTypeOf<RowRecord['status']>().toEqualTypeOf<TrafficRecord['status']>();
    expect(new Set(ROW_FIELDS).size).toBe(ROW_FIELDS.length);
  });
});
