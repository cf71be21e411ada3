// Injected by esbuild from package.json; falls back for ts-run tests.
declare const LOOPGATE_VERSION: string | undefined;
export const version: string = typeof LOOPGATE_VERSION === 'string' ? LOOPGATE_VERSION : '0.0.0-dev';
