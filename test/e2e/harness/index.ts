// The e2e harness: real VS Code (code-server) driven from the Node side.
// Extension-host code imports ./ext/testkit.js instead.
export {
  startCodeServer,
  childEnv,
  DEFAULT_USER_SETTINGS,
  type CodeServer,
  type StartCodeServerOptions,
} from './code-server.js';
export {
  openWorkbench,
  workbenchUrl,
  screenshot,
  keepForReadme,
  clickActivityBarItem,
  readTreeRows,
  setPaneExpanded,
  CHROMIUM_ARGS,
  type Workbench,
  type OpenWorkbenchOptions,
  type TreeRow,
} from './browser.js';
export {
  runExtensionHostTests,
  bundledEntry,
  formatRun,
  assertAllPassed,
  type RunExtensionHostTestsOptions,
  type ExtHostRun,
} from './ext-host.js';
export { RESULTS_ENV, type ExtTestResult, type ExtResultsFile } from './results.js';
export { pollUntil, type PollOptions } from './poll.js';
export {
  repoRoot,
  testResultsDir,
  logsDir,
  codeServerTarget,
  runTargets,
  ownVsCodeTargets,
  liveTier,
  type CodeServerTarget,
} from './paths.js';
