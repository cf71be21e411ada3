// One esbuild script, one entry per bundle. `vscode` is provided by the editor.
import { build } from 'esbuild';
import { chmodSync, readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20.18',
  format: 'cjs',
  sourcemap: 'linked',
  logLevel: 'warning',
  external: ['vscode'],
  define: { LOOPGATE_VERSION: JSON.stringify(pkg.version) },
};

const bundles = [
  { entryPoints: ['cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
  { entryPoints: ['extension/extension.ts'], outfile: 'dist/extension.js' },
  { entryPoints: ['language-server/main.ts'], outfile: 'dist/server.js' },
  // The OTLP export worker: the OpenTelemetry SDK, off the proxy's thread (proxy/otlp/worker.ts).
  { entryPoints: ['proxy/otlp/worker.ts'], outfile: 'dist/otlp-worker.js' },
  // The token counter for the context breakdown: gpt-tokenizer's tables, off the proxy's thread and out of cli.js.
  // Minified: its tables are one token a line in the package's source (5.9 MB as bundled, 3.7 MB minified).
  { entryPoints: ['analysis/tokenizer-worker.ts'], outfile: 'dist/tokenizer-worker.js', minify: true },
  // The request detail panel's page script (extension/traffic/detail-page.ts), run in the webview.
  {
    entryPoints: ['extension/traffic/detail-page.ts'],
    outfile: 'dist/detail-page.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
  // The session panel's page script (extension/sessions/session-page.ts): live updates and links.
  {
    entryPoints: ['extension/sessions/session-page.ts'],
    outfile: 'dist/session-page.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
];

await Promise.all(bundles.map((b) => build({ ...common, ...b })));
chmodSync('dist/cli.js', 0o755);
