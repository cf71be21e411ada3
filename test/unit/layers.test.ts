// The arrows between folders (README, Layout): proxy/ never reaches into
// extension/ or `vscode`, core/ (options, defaults, the record, the IPC
// messages) depends on nothing, the pure rules on nothing but themselves and
// core/, the extension, the language server and the CLI never on the pipeline's
// internals, and no module imports one that imports it back.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SOURCE_FOLDERS } from '../source-folders.js';

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

// Everything that runs in Node: the shared floors, the simulator, the proxy, the CLI and the language server.
const proxyFiles = SOURCE_FOLDERS.filter((d) => d !== 'extension').flatMap(sources);
const extensionFiles = sources('extension');

/**
 * The floors, lowest first (docs/development.md, Layout): a module imports from its own folder or
 * from a lower floor, never from beside or above it. Two folders on one floor know nothing of each
 * other. The pure rules are grouped by domain, each domain a folder with a floor of its own.
 */
const FLOORS: Record<string, number> = {
  // What everyone needs: the options and every default, the traffic record, "did it fail", the IPC messages,
  // the contract of the proxy's own API.
  core: 0,
  // The pure rules (no I/O), by domain; a domain imports core/ and the domains below it.
  'rules/terminal': 1,
  'rules/json': 1.05,
  // Who may ask (browser requests, the health proof, run credentials): redaction masks what these mint.
  'rules/access': 1.05,
  'rules/redaction': 1.1,
  'rules/protocols': 1.1,
  'rules/wire': 1.2,
  'rules/addresses': 1.2,
  'rules/cassettes': 1.2,
  'rules/sessions': 1.2,
  'rules/faults': 1.3,
  'rules/keys': 1.3,
  'rules/otlp': 1.3,
  'rules/replay': 1.3,
  // Budget caps: where a cap stands, what a refusal says, how loopgate.json may lower them.
  'rules/budgets': 1.3,
  'rules/diagnosis': 1.4,
  'rules/project': 1.5,
  // Files: Loopgate's folders and token file, the traffic log, cassettes on disk.
  'storage/config': 2,
  'storage/log': 2.1,
  'storage/cassettes': 2.1,
  // What the CLI and the editor share above the rules: terminal text, the local-API client, the token counter.
  presentation: 3,
  client: 3,
  analysis: 3,
  // The embedded Model-Access API, and the cassette player (`serve --replay`): upstreams of their own, programs
  // beside the proxy (each answers the proxy, never a client: the proxy's one writer to a client is client-reply.ts).
  simulator: 4,
  'cassette-player': 4,
  // Loopgate's MCP server (issue 43): the tools over the local-API client; the CLI (stdio) and the proxy (HTTP) serve it.
  mcp: 4,
  // The proxy's runtime.
  'proxy/bridge': 4,
  'proxy/otlp': 5,
  'proxy/cassette': 5,
  // The live traffic ring and the session book: below the pipeline that fills them.
  'proxy/traffic': 5,
  'proxy/pipeline': 6,
  // The proxy's setup, below the file that starts and stops it: the context and upstream pool, the HTTP server.
  'proxy/build-context.ts': 6.5,
  'proxy/http-server.ts': 6.5,
  'proxy/server.ts': 7,
  'language-server': 7,
  cli: 8,
  // The entry: it only wires cli/.
  'cli/main.ts': 9,
  // The extension stands on the shared floors (it runs the CLI's proxy, never imports its runtime), in floors of its own.
  // Its top-level files are the shared ground (settings, secrets, the keys answer, the protocol trials, …) …
  extension: 10,
  // … the proxy it runs or attaches to …
  'extension/proxy-host': 11,
  // … the webviews' escaping template (a leaf: the request panel and the session panel build on it) …
  'extension/traffic/html.ts': 11,
  // … the features, which know nothing of each other (the chat provider gets the Model Explorer's list through a function) …
  'extension/lm': 12,
  'extension/traffic': 12,
  'extension/sessions': 12,
  'extension/faults': 12,
  'extension/views': 12,
  'extension/status-bar.ts': 12,
  'extension/terminal-env.ts': 12,
  'extension/otlp-headers.ts': 12,
  'extension/language-client.ts': 12,
  // … the commands, which drive the features, what reacts to changes, and the entry that wires it all.
  'extension/commands': 13,
  'extension/reactions.ts': 14,
  'extension/extension.ts': 15,
};

/** Folders that have floors inside them: a file two levels down belongs to its subfolder's floor. */
const SPLIT = ['proxy/', 'extension/', 'rules/', 'storage/'];

/**
 * `rules/sessions` for rules/sessions/pricing.ts, `rules/project` for rules/project/config-lint/x.ts, `cli` for
 * cli/serve.ts, `extension` for a top-level file of extension/, a file named in FLOORS for itself.
 */
function folderOf(file: string): string {
  if (FLOORS[file] !== undefined) return file;
  const parts = file.split('/');
  return SPLIT.some((s) => file.startsWith(s)) && parts.length > 2 ? parts.slice(0, 2).join('/') : parts[0]!;
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

/**
 * The same edges between folders: a.ts in x/ importing y/b.ts is the arrow x → y. A file with a floor of its own
 * (extension/extension.ts, the entry) stands for itself.
 */
function folderGraph(files: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const node = (f: string) => (FLOORS[f] === undefined ? dirname(f) : f);
  const folders = new Map<string, Set<string>>();
  for (const [from, tos] of files) {
    const a = node(from);
    if (!folders.has(a)) folders.set(a, new Set());
    for (const to of tos) if (node(to) !== a) folders.get(a)!.add(node(to));
  }
  return new Map([...folders].map(([f, tos]) => [f, [...tos]]));
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
    const core = proxyFiles.filter((f) => f.startsWith('core/'));
    expect(core).toContain('core/options.ts');
    const bad = core.flatMap((f) =>
      imports(f)
        .filter(({ spec }) => !target(f, spec)?.startsWith('core/'))
        .map(({ spec }) => `${f} → ${spec}`),
    );
    expect(bad).toEqual([]);
  });

  it('keeps the pure rules free of the rest of proxy/ but core/ (log, pipeline, cli, … depend on rules, not back)', () => {
    const bad = proxyFiles
      .filter((f) => f.startsWith('rules/'))
      .flatMap((f) =>
        imports(f)
          .filter(({ spec }) => {
            const t = target(f, spec);
            return t !== undefined && !t.startsWith('rules/') && !t.startsWith('core/');
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

  it('has no circle between folders either, subfolders included (the simulator once had one)', () => {
    expect(cycles(folderGraph(importGraph(() => true)))).toEqual([]);
  });

  it('finds a circle between two folders whose files form none (the check above can fail)', () => {
    const files = new Map([
      ['simulator/a.ts', ['simulator/protocols/b.ts']],
      ['simulator/protocols/b.ts', ['simulator/c.ts']],
      ['simulator/c.ts', []],
    ]);
    expect(cycles(files)).toEqual([]);
    expect(cycles(folderGraph(files))).toEqual(['simulator → simulator/protocols → simulator']);
  });

  it('keeps the proxy, the simulator and the cassette player apart: three programs, none imports another', () => {
    const programs = ['proxy/', 'simulator/', 'cassette-player/'];
    const programOf = (f: string) => programs.find((p) => f.startsWith(p));
    const bad = proxyFiles.flatMap((f) =>
      imports(f)
        .map(({ spec }) => target(f, spec))
        .filter(
          (t): t is string =>
            t !== undefined &&
            programOf(f) !== undefined &&
            programOf(t) !== undefined &&
            programOf(t) !== programOf(f),
        )
        .map((t) => `${f} → ${t}`),
    );
    expect(bad).toEqual([]);
  });

  it("keeps the editor and the language server on the shared floors: never the proxy's runtime or the simulator", () => {
    const clients = [...extensionFiles, ...proxyFiles.filter((f) => f.startsWith('language-server/'))];
    const bad = clients.flatMap((f) =>
      imports(f)
        .map(({ spec }) => target(f, spec))
        .filter(
          (t): t is string =>
            t !== undefined && ['proxy/', 'simulator/', 'cassette-player/'].some((p) => t.startsWith(p)),
        )
        .map((t) => `${f} → ${t}`),
    );
    expect(bad).toEqual([]);
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
    expect(up('extension/traffic/entry-reader.ts', 'client/local-api-client.ts')).toBe(false);
  });

  it('lets only the sink (pipeline/client-reply.ts) hold or write a ServerResponse in proxy/: one writer to the client', () => {
    // handle.ts receives the response from node:http and hands it straight to the sink.
    const allowed = new Set(['proxy/pipeline/client-reply.ts', 'proxy/pipeline/handle.ts', 'proxy/server.ts']);
    const writes = /\.(writeHead|flushHeaders|setHeader|writeContinue)\(|\bres\.(write|end)\(|ServerResponse/;
    const bad = proxyFiles.filter(
      (f) =>
        f.startsWith('proxy/') &&
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
