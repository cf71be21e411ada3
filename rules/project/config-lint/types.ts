// Shapes shared by the config-lint rules and the language server that serves them.
// Positions are UTF-16 offsets into the text (what TextDocument.positionAt takes).

/** Stable diagnostic codes: editors, tests and docs refer to these strings. */
export const LINT_CODES = {
  duplicateV1: 'loopgate.duplicate-v1',
  endpointInBase: 'loopgate.endpoint-in-base',
  missingV1: 'loopgate.missing-v1',
  anthropicEndsV1: 'loopgate.anthropic-ends-v1',
  insecureHttp: 'loopgate.insecure-http',
  badUrl: 'loopgate.bad-url',
  apiKeyInFile: 'loopgate.api-key-in-file',
  unknownModel: 'loopgate.unknown-model',
  directToService: 'loopgate.direct-to-service',
  /** loopgate.json that the proxy would refuse (bad JSON, a bad alias) or partly ignore. */
  badProjectFile: 'loopgate.bad-project-file',
  /** A loopgate.json alias whose target is not in the key's model list. */
  unknownAliasTarget: 'loopgate.unknown-alias-target',
} as const;

export type LintCode = (typeof LINT_CODES)[keyof typeof LINT_CODES];

export type LintSeverity = 'error' | 'warning' | 'information';

export interface LintEdit {
  start: number;
  end: number;
  newText: string;
}

export interface LintFix {
  title: string;
  edits: LintEdit[];
  isPreferred?: boolean;
}

/** An action that runs an editor command instead of editing text. */
export interface LintCommand {
  title: string;
  command: string;
}

export interface LintDiagnostic {
  code: LintCode;
  severity: LintSeverity;
  /** Says what is wrong and what to do, in the spec's terms. Never contains a key. */
  message: string;
  start: number;
  end: number;
  fixes: LintFix[];
  commands: LintCommand[];
}

/** What the rules know besides the text. Unknown fields disable the rules that need them. */
export interface LintContext {
  /** Model IDs from the key's GET /models; undefined or empty = not known, no model diagnostics. */
  models?: readonly string[];
  /** Origin of the running local proxy, e.g. http://127.0.0.1:8787; undefined = not running. */
  proxyUrl?: string;
}

export interface LintFile {
  /** File name or path (a URI path works); decides .env detection. */
  fileName?: string;
  /** The editor's language id, when there is one. */
  languageId?: string;
}

export type FileKind = 'dotenv' | 'json' | 'yaml' | 'toml' | 'js' | 'python';

/** Files bigger than this are not checked at all. */
export const MAX_LINT_CHARS = 256 * 1024;
/** At most this many diagnostics per document. */
export const MAX_DIAGNOSTICS = 100;

export const SET_API_KEY_COMMAND = 'loopgate.setApiKey';
