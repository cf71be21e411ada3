// Chrome DevTools' own HAR parser (front_end/models/har, the code behind
// Network ▸ Import HAR), taken from the local Chromium's resources.pak. Its
// imports of DevTools' core modules are stubbed: HARRoot only needs them for
// initiator URLs. Returns null when Chromium (or the module) is not installed.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

export const CHROMIUM_PAK = '/usr/lib/chromium/resources.pak';

type HarRoot = new (har: unknown) => {
  log: { entries: Array<{ request: { url: string }; response: { status: number } }> };
};

function findHarModule(pak: Buffer): string | null {
  // .pak v5: version u32, encoding u8 + 3 pad, count u16, aliases u16, then (id u16, offset u32) × (count + 1).
  if (pak.readUInt32LE(0) !== 5) return null;
  const count = pak.readUInt16LE(8);
  const offset = (i: number) => pak.readUInt32LE(12 + i * 6 + 2);
  for (let i = 0; i < count; i++) {
    let chunk = pak.subarray(offset(i), offset(i + 1));
    try {
      // Chromium marks brotli resources with 0x1e 0x9b and a 6-byte size.
      if (chunk[0] === 0x1e && chunk[1] === 0x9b) chunk = brotliDecompressSync(chunk.subarray(8));
      else if (chunk[0] === 0x1f && chunk[1] === 0x8b) chunk = gunzipSync(chunk);
    } catch {
      continue;
    }
    const text = chunk.toString('utf8');
    if (text.includes('HARRoot') && text.includes('HAREntry') && text.includes('safeNumber')) return text;
  }
  return null;
}

export async function loadDevToolsHarRoot(): Promise<HarRoot | null> {
  if (!existsSync(CHROMIUM_PAK)) return null;
  const source = findHarModule(readFileSync(CHROMIUM_PAK));
  if (!source) return null;
  const stub =
    'const __stub=(()=>{const h={get:(t,k)=>k===Symbol.toPrimitive?()=>"":k==="then"?undefined:p,apply:()=>p,construct:()=>p};const p=new Proxy(function(){},h);return p;})();\n';
  const patched =
    stub +
    source
      .replace(/import\s*\*\s*as\s*(\w+)\s*from\s*"[^"]*";?/g, 'const $1=__stub;')
      .replace(/\/\/# sourceMappingURL=.*$/gm, '');
  const file = join(mkdtempSync(join(tmpdir(), 'lg-devtools-')), 'har.mjs');
  writeFileSync(file, patched);
  const mod = (await import(pathToFileURL(file).href)) as { HARFormat?: { HARRoot?: HarRoot } };
  return mod.HARFormat?.HARRoot ?? null;
}
