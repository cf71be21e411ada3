// The environment a forked proxy (and the language server) gets: the parent's,
// minus anything that looks like a credential. The key and token travel over
// IPC only. No OTEL_* either: the editor's proxy exports spans where
// loopgate.otlp.endpoint says, with the headers from SecretStorage, never where
// the editor's own environment points (and OTEL_EXPORTER_OTLP_HEADERS carries a
// collector's token). A variable holding a key under an innocent name goes too:
// the same rule as `loopgate run` (rules/project/child-secrets.ts).
import { secretsOfEnv, withoutSecrets } from '../rules/project/child-secrets.js';

const CREDENTIAL_NAME = /KEY|TOKEN|SECRET|^OTEL_/i;

/** `keys`: the keys the editor holds (SecretStorage), when at hand; the environment's own are found in it. */
export function childEnv(parent: NodeJS.ProcessEnv, keys: readonly string[] = []): NodeJS.ProcessEnv {
  const { env } = withoutSecrets(parent, [...keys, ...secretsOfEnv(parent)]);
  for (const name of Object.keys(env)) if (CREDENTIAL_NAME.test(name)) delete env[name];
  // The VS Code extension host may be Electron; make the child a plain Node.
  env.ELECTRON_RUN_AS_NODE = '1';
  return env;
}

/**
 * For launchers that merge our env over process.env (vscode-languageclient does):
 * every variable left out is set to undefined, which Node leaves out of the
 * child's environment.
 */
export function childEnvOverrides(parent: NodeJS.ProcessEnv, keys: readonly string[] = []): NodeJS.ProcessEnv {
  const env = childEnv(parent, keys);
  for (const name of Object.keys(parent)) if (!(name in env)) env[name] = undefined;
  return env;
}
