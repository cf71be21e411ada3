// The environment a forked proxy gets: the parent's, minus anything that looks
// like a credential. The key and token travel over IPC only. No OTEL_* either:
// the editor's proxy exports spans where loopgate.otlp.endpoint says, with the
// headers from SecretStorage, never where the editor's own environment points
// (and OTEL_EXPORTER_OTLP_HEADERS carries a collector's token).

const CREDENTIAL_NAME = /KEY|TOKEN|SECRET|^OTEL_/i;

export function childEnv(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) {
    if (!CREDENTIAL_NAME.test(name)) env[name] = value;
  }
  // The VS Code extension host may be Electron; make the child a plain Node.
  env.ELECTRON_RUN_AS_NODE = '1';
  return env;
}

/**
 * For launchers that merge our env over process.env (vscode-languageclient does):
 * every credential-named variable is set to undefined, which Node leaves out
 * of the child's environment.
 */
export function childEnvOverrides(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = childEnv(parent);
  for (const name of Object.keys(parent)) if (CREDENTIAL_NAME.test(name)) env[name] = undefined;
  return env;
}
