// What the server knows besides the documents, and how it arrives: in
// initializationOptions and in the `loopgate/state` notification.
import { DEFAULT_HOST, DEFAULT_PORT } from '../core/options.js';

export const STATE_NOTIFICATION = 'loopgate/state';

/** The payload of `loopgate/state`; each notification replaces the whole state. */
export interface LoopgateState {
  /** The key's model IDs (GET /models); absent/null = unknown. */
  models?: string[] | null;
  /** Origin of the running local proxy; absent/null = not running. */
  proxyUrl?: string | null;
}

export interface LoopgateInitOptions extends LoopgateState {
  /** The client can run `loopgate.setApiKey` (the Loopgate VS Code extension); other editors cannot. */
  commands?: boolean;
}

export interface ServerState {
  models?: string[];
  proxyUrl?: string;
}

const MAX_MODELS = 10_000;
const EXAMPLE_PROXY_URL = `http://${DEFAULT_HOST}:${DEFAULT_PORT}`;

/** Validates untrusted input; each problem is returned so the server can log what to fix. */
export function readState(input: unknown): { state: ServerState; problems: string[] } {
  const problems: string[] = [];
  const state: ServerState = {};
  if (input === undefined || input === null) return { state, problems };
  if (typeof input !== 'object' || Array.isArray(input)) {
    return {
      state,
      problems: [`loopgate/state must be an object like {"models": ["id"], "proxyUrl": "${EXAMPLE_PROXY_URL}"}.`],
    };
  }
  const { models, proxyUrl } = input as Record<string, unknown>;
  if (Array.isArray(models) && models.every((m) => typeof m === 'string')) state.models = models.slice(0, MAX_MODELS);
  else if (models !== undefined && models !== null)
    problems.push('"models" must be an array of model ID strings; ignored.');
  if (typeof proxyUrl === 'string' && /^https?:\/\//i.test(proxyUrl)) state.proxyUrl = proxyUrl;
  else if (proxyUrl !== undefined && proxyUrl !== null)
    problems.push(`"proxyUrl" must be an http(s) URL such as ${EXAMPLE_PROXY_URL}; ignored.`);
  return { state, problems };
}
