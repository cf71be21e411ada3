// Lint: type-aware rules that catch what tsc does not (a promise nobody awaits, a promise passed where a
// callback's result is ignored), on top of the recommended sets. Formatting is Prettier's job, not ESLint's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', '.cache/**', '.loopgate-test/**', 'test-results/**', '**/*.mjs', '**/*.js'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // Loopgate escapes control characters for terminals and shells: matching them is the point.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests read untyped JSON off the wire and write small async request handlers for their test
    // servers (a rejection there is an unhandled rejection, which vitest reports as a failure).
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
    },
  },
);
