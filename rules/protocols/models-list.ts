// GET /v1/models: the key's model list (parsed in rules/wire/model-list.ts). Not a
// protocol a model speaks, but its path is read by the proxy, doctor, the CLI
// and the extension, so it is defined here with the others.

export const modelsList = {
  path: '/v1/models',
  endpoint: '/models',
} as const;

export const MODELS_PATH = modelsList.path;
