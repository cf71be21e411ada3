// The folders that hold Loopgate's sources, lowest floor first (test/unit/layers.test.ts says what each may import).
export const SOURCE_FOLDERS = [
  'core',
  'rules',
  'storage',
  'presentation',
  'client',
  'analysis',
  'simulator',
  'cassette-player',
  'mcp',
  'proxy',
  'language-server',
  'cli',
  'extension',
];
