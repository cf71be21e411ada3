// The arrows between folders (README, Layout): proxy/ never reaches into
// extension/ or `vscode`, core/ (options, defaults, the record, the IPC
// messages) depends on nothing, the pure rules on nothing but themselves and
// core/, the extension, the language server and the CLI never on the pipeline's
// internals, and no module imports one that imports it back.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f).split('\\').join('/'));
}

/** Every module specifier a file imports or re-exports, static or dynamic, with whether it is type-only. */
function imports(file: string): { spec: string; typeOnly: boolean }[] {
  const text = readFileSync(join(root, file), 'utf8');
  const out: { spec: string; typeOnly: boolean }[] = [];
  for (const m of text.matchAll(/(?:^|;)\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?'([^']+)'/gm))
    out.push({ spec: m[2]!, typeOnly: Boolean(m[1]) });
  for (const m of text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) out.push({ spec: m[1]!, typeOnly: false });
  return out;
}

/** The repository-relative .ts file a relative specifier names; undefined for packages. */
function target(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  return relative(root, resolve(root, dirname(from), spec.replace(/\.js$/, '.ts')))
    .split('\\')
    .join('/');
}

// Everything that runs in Node: the proxy, the CLI and the language server.
const proxyFiles = [...sources('proxy'), ...sources('cli'), ...sources('language-server')];
const extensionFiles = sources('extension');

/**
 * The floors of proxy/, lowest first: a module imports from its own folder or
 * from a lower floor, never from beside or above it. Two folders on one floor
 * know nothing of each other.
 */
const FLOORS: Record<string, number> = {
  // What everyone needs: the options and every default, the traffic record, "did it fail", the IPC messages.
  'proxy/core': 0,
  'proxy/rules': 1,
  'proxy/version.ts': 1,
  'proxy/bridge': 2,
  'proxy/simulator': 2,
  'proxy/config': 2,
  'proxy/log': 2,
  // Cassettes on disk (issue 34): read and written here, recorded and replayed by the pipeline.
  'proxy/cassette': 2,
  'proxy/health-client.ts': 2,
  // The one client of the proxy's own API (its contract is core/local-api.ts): the CLI and the extension read through it.
  'proxy/local-api-client.ts': 2,
  'proxy/doctor-checks.ts': 2,
  'proxy/otlp': 3,
  // The live traffic ring, its rendering and replays: below the pipeline that fills it.
  'proxy/traffic': 3,
  'proxy/pipeline': 4,
  'proxy/server.ts': 5,
  'language-server': 5,
  cli: 6,
  // The entry: it only wires cli/.
  'cli/main.ts': 7,
  // The extension stands on all of it (it runs the CLI's proxy and reads core/ and rules/), in floors of its own.
  // Its top-level files are the shared ground (settings, secrets, the keys answer, the protocol trials, …) …
  extension: 8,
  // … the proxy it runs or attaches to …
  'extension/proxy-host': 9,
  // … the webviews' escaping template (a leaf: the request panel and the session panel build on it) …
  'extension/traffic/html.ts': 9,
  // … the features, which know nothing of each other (the chat provider gets the Model Explorer's list through a function) …
  'extension/lm': 10,
  'extension/traffic': 10,
  'extension/sessions': 10,
  'extension/faults': 10,
  'extension/views': 10,
  'extension/status-bar.ts': 10,
  'extension/terminal-env.ts': 10,
  'extension/otlp-headers.ts': 10,
  'extension/language-client.ts': 10,
  // … the commands, which drive the features, what reacts to changes, and the entry that wires it all.
  'extension/commands': 11,
  'extension/reactions.ts': 12,
  'extension/extension.ts': 13,
};

/**
 * `proxy/rules` for proxy/rules/config-lint/x.ts, `cli` for cli/serve.ts, `extension/lm` for extension/lm/x.ts,
 * `extension` for a top-level file of extension/, a file named in FLOORS for itself.
 */
function folderOf(file: string): string {
  if (FLOORS[file] !== undefined) return file;
  const parts = file.split('/');
  return (file.startsWith('proxy/') || file.startsWith('extension/')) && parts.length > 2
    ? parts.slice(0, 2).join('/')
    : parts[0]!;
}

function floorOf(file: string): number {
  return FLOORS[folderOf(file)] ?? Number.NaN;
}

/** Edges between the sources of proxy/ and extension/, for the imports `keep` accepts. */
function importGraph(keep: (i: { spec: string; typeOnly: boolean }) => boolean): Map<string, string[]> {
  const files = new Set([...proxyFiles, ...extensionFiles]);
  const edges = new Map<string, string[]>();
  for (const f of files) {
    edges.set(
      f,
      imports(f)
        .filter(keep)
        .map((i) => target(f, i.spec))
        .filter((t): t is string => t !== undefined && files.has(t)),
    );
  }
  return edges;
}

function cycles(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (f: string, path: string[]): void => {
    state.set(f, 'open');
    for (const t of edges.get(f) ?? []) {
      if (state.get(t) === 'open') found.push([...path.slice(path.indexOf(t)), t].join(' → '));
      else if (!state.has(t)) visit(t, [...path, t]);
    }
    state.set(f, 'done');
  };
  for (const f of edges.keys()) if (!state.has(f)) visit(f, [f]);
  return found;
}

describe('layers', () => {
  it('finds the sources it checks', () => {
    expect(proxyFiles).toContain('language-server/lint-server.ts');
    expect(proxyFiles.length).toBeGreaterThan(50);
    expect(extensionFiles).toContain('extension/extension.ts');
  });

  it('keeps proxy/ (the language server included) free of vscode and of extension/', () => {
    const bad = proxyFiles.flatMap((f) =>
      imports(f)
        .filter(({ spec }) => spec === 'vscode' || target(f, spec)?.startsWith('extension/'))
        .map(({ spec }) => `${f} → ${spec}`),
    );
    expect(bad).toEqual([]);
  });

  it('keeps core/ the ground floor: it imports nothing but itself, not even a package (types, constants, tiny pure functions)', () => {
    const core = proxyFiles.filter((f) => f.startsWith('proxy/core/'));
    expect(core).toContain('proxy/core/options.ts');
    const bad = core.flatMap((f) =>
      imports(f)
        .filter(({ spec }) => !target(f, spec)?.startsWith('proxy/core/'))
        .map(({ spec }) => `${f} → ${spec}`),
    );
    expect(bad).toEqual([]);
  });

  it('keeps the pure rules free of the rest of proxy/ but core/ (log, pipeline, cli, … depend on rules, not back)', () => {
    const bad = proxyFiles
      .filter((f) => f.startsWith('proxy/rules/'))
      .flatMap((f) =>
        imports(f)
          .filter(({ spec }) => {
            const t = target(f, spec);
            return t !== undefined && !t.startsWith('proxy/rules/') && !t.startsWith('proxy/core/');
          })
          .map(({ spec }) => `${f} → ${spec}`),
      );
    expect(bad).toEqual([]);
  });

  it("keeps the extension, the language server and the CLI off the pipeline (its options and record are core/'s)", () => {
    const clients = [
      ...extensionFiles,
      ...proxyFiles.filter((f) => f.startsWith('language-server/') || f.startsWith('cli/')),
    ];
    expect(clients).toContain('cli/serve.ts');
    const bad = clients.flatMap((f) =>
      imports(f)
        .filter(({ spec }) => target(f, spec)?.startsWith('proxy/pipeline/'))
        .map(({ spec }) => `${f} → ${spec}`),
    );
    expect(bad).toEqual([]);
  });

  it('has no import cycles in proxy/ or extension/, type-only imports included', () => {
    // A cycle of types still says two modules are one: the shared type belongs in the lower of them.
    expect(cycles(importGraph(() => true))).toEqual([]);
  });

  it('finds a cycle of type-only imports (the check above can fail)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['a.ts']],
    ]);
    expect(cycles(graph)).toEqual(['a.ts → b.ts → a.ts']);
  });

  it('imports only from the same folder or a lower floor of proxy/', () => {
    const bad = proxyFiles.flatMap((f) =>
      imports(f)
        .map(({ spec }) => target(f, spec))
        .filter(
          (t): t is string =>
            t !== undefined && proxyFiles.includes(t) && folderOf(t) !== folderOf(f) && floorOf(t) >= floorOf(f),
        )
        .map((t) => `${f} (floor ${floorOf(f)}) → ${t} (floor ${floorOf(t)})`),
    );
    expect(bad).toEqual([]);
  });

  it('puts every folder and top-level file of proxy/ on a floor', () => {
    expect(proxyFiles.filter((f) => FLOORS[folderOf(f)] === undefined)).toEqual([]);
  });

  it('gives extension/ floors too: every file on one, and no import from beside or above (issue 32)', () => {
    expect(extensionFiles.filter((f) => FLOORS[folderOf(f)] === undefined)).toEqual([]);
    expect(folderOf('extension/lm/chat-provider.ts')).toBe('extension/lm');
    expect(folderOf('extension/settings.ts')).toBe('extension');
    const all = [...proxyFiles, ...extensionFiles];
    const bad = extensionFiles.flatMap((f) =>
      imports(f)
        .map(({ spec }) => target(f, spec))
        .filter(
          (t): t is string =>
            t !== undefined && all.includes(t) && folderOf(t) !== folderOf(f) && floorOf(t) >= floorOf(f),
        )
        .map((t) => `${f} (floor ${floorOf(f)}) → ${t} (floor ${floorOf(t)})`),
    );
    expect(bad).toEqual([]);
  });

  it('the extension floors catch an arrow back up that is no circle (the chat provider used to import the Model Explorer)', () => {
    const up = (from: string, to: string) => folderOf(to) !== folderOf(from) && floorOf(to) >= floorOf(from);
    expect(up('extension/lm/register-chat-provider.ts', 'extension/views/models-model.ts')).toBe(true);
    expect(up('extension/settings.ts', 'extension/lm/model-catalog.ts')).toBe(true);
    expect(up('extension/views/models-model.ts', 'extension/settings.ts')).toBe(false);
    expect(up('extension/traffic/entry-reader.ts', 'proxy/local-api-client.ts')).toBe(false);
  });

  it('lets only the sink (pipeline/client-reply.ts) hold or write a ServerResponse; the simulator and the cassette player are servers of their own', () => {
    // handle.ts receives the response from node:http and hands it straight to the sink.
    const allowed = new Set(['proxy/pipeline/client-reply.ts', 'proxy/pipeline/handle.ts', 'proxy/server.ts']);
    const writes = /\.(writeHead|flushHeaders|setHeader|writeContinue)\(|\bres\.(write|end)\(|ServerResponse/;
    const bad = proxyFiles.filter(
      (f) =>
        !f.startsWith('proxy/simulator/') &&
        f !== 'proxy/cassette/player.ts' &&
        f !== 'proxy/pipeline/client-reply.ts' &&
        writes.test(readFileSync(join(root, f), 'utf8')) &&
        !allowed.has(f),
    );
    expect(bad).toEqual([]);
    // handle.ts and server.ts may name the type (to pass it on), never write to it.
    for (const f of ['proxy/pipeline/handle.ts', 'proxy/server.ts']) {
      expect(readFileSync(join(root, f), 'utf8'), f).not.toMatch(
        /\.(writeHead|flushHeaders|setHeader)\(|\bres\.(write|end|destroy)\(/,
      );
    }
  });
});
