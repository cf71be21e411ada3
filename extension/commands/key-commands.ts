// Set API Key and Add API Key (validated with GET {base_url}/models before it
// is saved), Remove, Rename, Clear API Key, and Set Base URL.
import { STATUS_CODES } from 'node:http';
import * as vscode from 'vscode';
import { checkApiKey } from '../../rules/redaction/api-key.js';
import { diagnose, parseErrorBody } from '../../rules/diagnosis/diagnose.js';
import { parseModelList } from '../../rules/wire/model-list.js';
import { MODELS_PATH } from '../../rules/protocols/index.js';
import { parseUpstream, type UrlProblem } from '../../rules/addresses/urls.js';
import type { KeyStore } from '../secrets.js';
import { KEY_NAME } from '../../rules/keys/key-list.js';
import { readSettings } from '../settings.js';

export interface KeyCheck {
  ok: boolean;
  status?: number;
  /** What to tell the user, in the spec's terms. */
  message: string;
  modelCount?: number;
}

/**
 * GET {base_url}/models with the candidate key, straight to the upstream (the key is not stored yet).
 * The key's shape, the list and the refusals are read by the same rules as the proxy's and doctor's.
 */
async function checkKey(baseUrl: string, raw: string): Promise<KeyCheck> {
  const shape = checkApiKey(raw);
  // status 0: nothing was asked, and no "save anyway" is offered for a key that cannot be sent.
  if ('problem' in shape) return { ok: false, status: 0, message: `The key was not saved: ${shape.problem}.` };
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/models`, {
      headers: { authorization: `Bearer ${shape.key}` },
      signal: AbortSignal.timeout(20_000),
      redirect: 'manual',
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    return { ok: false, message: `Could not reach ${baseUrl}/models (${cause}). Check the base URL and your network.` };
  }
  const body = await res.text().catch(() => '');
  if (res.ok) {
    const list = parseModelList(body);
    // A 200 that is not a model list (a web page, a SPA fallback) proves nothing about the key.
    if (!list.ok) {
      return {
        ok: false,
        status: res.status,
        message: `${baseUrl}/models answered ${res.status} but not with a model list: the base URL is probably not the Model-Access API. Fix loopgate.baseUrl.`,
      };
    }
    const count = list.models.length;
    return {
      ok: true,
      status: res.status,
      modelCount: count,
      message: `The key works: GET /models lists ${count} model${count === 1 ? '' : 's'}.`,
    };
  }
  const diagnosis = diagnose(parseErrorBody(res.status, body), {
    method: 'GET',
    originalPath: MODELS_PATH,
    canonicalPath: MODELS_PATH,
    time: new Date(),
  });
  const head = `${res.status} ${STATUS_CODES[res.status] ?? 'HTTP error'}`;
  const where = res.status === 404 ? ` (at ${baseUrl}/models: fix loopgate.baseUrl)` : '';
  return {
    ok: false,
    status: res.status,
    message: `${head}: ${diagnosis?.hint ?? 'The key was not saved; try again later or run Loopgate: Run Diagnosis.'}${where}`,
  };
}

/** Where to validate a key: the configured upstream; undefined in demo mode (no base URL). */
function validationBase(): { baseUrl: string } | { problem: string } | undefined {
  const raw = readSettings().baseUrl;
  if (!raw) return undefined;
  const parsed = parseUpstream(raw);
  if (!parsed.ok)
    return { problem: `loopgate.baseUrl is not usable: ${parsed.problems.map((p) => p.message).join(' ')}` };
  return { baseUrl: parsed.baseUrl };
}

export interface SetKeyResult {
  saved: boolean;
  status?: number;
  message: string;
}

const DEMO_NOTICE =
  'No base URL is set (loopgate.baseUrl), so the proxy runs the simulator with its demo key and your key is not used yet. ' +
  'It is used, and the Models view checks it, once you set the base URL.';

/** Asks for the key: the password input, or `key` for scripted use. */
async function askForKey(key: unknown, checkedWith?: string): Promise<string | undefined> {
  if (typeof key === 'string') return key.trim();
  const value = await vscode.window.showInputBox({
    title: 'Loopgate: Set API Key',
    prompt: checkedWith
      ? `Paste the API key from the service console. It is checked with GET ${checkedWith}/models, then kept only in VS Code's SecretStorage.`
      : "Paste the API key from the service console. It is kept only in VS Code's SecretStorage (not checked: no base URL is set).",
    password: true,
    ignoreFocusOut: true,
    placeHolder: 'sk-…',
    validateInput: (v) =>
      !v.trim()
        ? 'Paste the key.'
        : /\s/.test(v.trim())
          ? 'A key has no spaces or line breaks: copy it again.'
          : undefined,
  });
  return value?.trim();
}

/**
 * `key` is for scripted use (tests); people get the password input.
 *
 * Demo mode (no base URL): a real key is never checked against the simulator, which
 * knows only its demo keys and would refuse it. People are asked to set the base URL
 * first, and the key is then checked against it; or they save the key unchecked.
 * A scripted call saves it unchecked. Either way the notice says the key is used,
 * and checked by the Models view, once a base URL is set.
 */
export function setApiKey(store: KeyStore, key?: unknown): Promise<SetKeyResult> {
  return acquireKey(key, (candidate) => store.set(candidate));
}

/**
 * Add API Key: another key, checked as Set API Key checks one, under a name
 * (asked for; `name` for scripted use). A key belongs to a group and the group
 * decides models and protocols, so the proxy routes each request to the key
 * that serves it.
 */
export async function addApiKey(store: KeyStore, key?: unknown, name?: unknown): Promise<SetKeyResult> {
  let chosen = typeof name === 'string' ? name : undefined;
  if (typeof key !== 'string') {
    chosen = await vscode.window.showInputBox({
      title: 'Loopgate: Add API Key',
      prompt:
        'A name for this key, e.g. claude, codex, cheap (shown in headers, the log and the Models view; never the key). Empty: key-N.',
      ignoreFocusOut: true,
      validateInput: (v) =>
        v.trim() === '' || KEY_NAME.test(v.trim()) ? undefined : '1–32 letters, digits, "_", "." or "-".',
    });
    if (chosen === undefined) return { saved: false, message: 'Cancelled.' };
    chosen = chosen.trim() || undefined;
  }
  return acquireKey(key, async (candidate) => {
    await store.add(candidate, chosen);
  });
}

/** A key from elsewhere (VS Code's Manage Models): Add API Key's check and save; undefined when it is stored already. */
export async function adoptKey(store: KeyStore, key: string): Promise<SetKeyResult | undefined> {
  if ((await store.list()).some((k) => k.key === key)) return undefined;
  return addApiKey(store, key);
}

/** Remove API Key: one of the stored keys, by name. */
export async function removeApiKey(store: KeyStore, name?: unknown): Promise<boolean> {
  const list = await store.list();
  const target =
    typeof name === 'string'
      ? name
      : await vscode.window.showQuickPick(
          list.map((k) => k.name),
          { title: 'Loopgate: Remove API Key', placeHolder: 'Which key?' },
        );
  if (!target) return false;
  const removed = await store.remove(target);
  if (removed) void vscode.window.showInformationMessage(`Loopgate: key "${target}" removed from SecretStorage.`);
  else void vscode.window.showWarningMessage(`Loopgate: no key is named "${target}".`);
  return removed;
}

/** Rename API Key. */
export async function renameApiKey(store: KeyStore, from?: unknown, to?: unknown): Promise<boolean> {
  const list = await store.list();
  const source =
    typeof from === 'string'
      ? from
      : await vscode.window.showQuickPick(
          list.map((k) => k.name),
          { title: 'Loopgate: Rename API Key', placeHolder: 'Which key?' },
        );
  if (!source) return false;
  const target =
    typeof to === 'string'
      ? to
      : await vscode.window.showInputBox({
          title: `Loopgate: Rename "${source}"`,
          value: source,
          validateInput: (v) => (KEY_NAME.test(v.trim()) ? undefined : '1–32 letters, digits, "_", "." or "-".'),
        });
  if (!target || target.trim() === source) return false;
  try {
    await store.rename(source, target.trim());
    return true;
  } catch (err) {
    void vscode.window.showErrorMessage(`Loopgate: could not rename: ${(err as Error).message}`);
    return false;
  }
}

/** Asks for (or takes) a key, checks it against the upstream where there is one, and saves it with `save`. */
async function acquireKey(key: unknown, save: (candidate: string) => Promise<void>): Promise<SetKeyResult> {
  let base = validationBase();
  if (!base) {
    if (typeof key !== 'string') {
      const choice = await vscode.window.showWarningMessage(
        'Loopgate: no base URL is set (demo mode), so there is nothing to check your key against. Set the base URL of your service first; the key is checked against it next.',
        'Set Base URL',
        'Save Key Without Check',
      );
      if (choice === 'Set Base URL') {
        if (!(await setBaseUrl())) return { saved: false, message: 'Cancelled: no base URL was set.' };
        base = validationBase();
      } else if (choice !== 'Save Key Without Check') {
        return { saved: false, message: 'Cancelled.' };
      }
    }
    if (!base) {
      const candidate = await askForKey(key);
      if (!candidate) return { saved: false, message: 'Cancelled.' };
      const saved = await trySave(save, candidate);
      if (!saved.ok) return saved.result;
      void vscode.window
        .showInformationMessage(`Loopgate: key saved in SecretStorage. ${DEMO_NOTICE}`, 'Set Base URL')
        .then((b) => b && vscode.commands.executeCommand('loopgate.setBaseUrl'));
      return { saved: true, message: `Saved without a check. ${DEMO_NOTICE}` };
    }
  }
  if ('problem' in base) {
    void vscode.window
      .showErrorMessage(`Loopgate: ${base.problem}`, 'Set Base URL')
      .then((b) => b && vscode.commands.executeCommand('loopgate.setBaseUrl'));
    return { saved: false, message: base.problem };
  }
  const candidate = await askForKey(key, base.baseUrl);
  if (!candidate) return { saved: false, message: 'Cancelled.' };

  const check = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Loopgate: checking the key with GET /models…' },
    () => checkKey(base.baseUrl, candidate),
  );
  if (check.ok) {
    const saved = await trySave(save, candidate);
    if (!saved.ok) return saved.result;
    void vscode.window.showInformationMessage(`Loopgate: key saved in SecretStorage. ${check.message}`);
    return { saved: true, status: check.status, message: check.message };
  }
  if (check.status === undefined && typeof key !== 'string') {
    // Unreachable upstream says nothing about the key: let the user decide.
    const choice = await vscode.window.showWarningMessage(
      `Loopgate: ${check.message} The key was not checked.`,
      'Save Anyway',
      'Set Base URL',
    );
    if (choice === 'Save Anyway') {
      const saved = await trySave(save, candidate);
      if (!saved.ok) return saved.result;
      return { saved: true, message: 'Saved without a check.' };
    }
    if (choice === 'Set Base URL') void vscode.commands.executeCommand('loopgate.setBaseUrl');
    return { saved: false, message: check.message };
  }
  void vscode.window
    .showErrorMessage(`Loopgate: the key was NOT saved. ${check.message}`, 'Try Again')
    .then((b) => b && vscode.commands.executeCommand('loopgate.setApiKey'));
  return { saved: false, status: check.status, message: check.message };
}

export async function clearApiKey(store: KeyStore, confirm = true): Promise<boolean> {
  if (confirm) {
    const ok = await vscode.window.showWarningMessage(
      'Loopgate: remove the API key from SecretStorage?',
      { modal: true },
      'Clear Key',
    );
    if (ok !== 'Clear Key') return false;
  }
  await store.clear();
  void vscode.window.showInformationMessage(
    'Loopgate: API key removed. Tools going through the proxy now get 401 until you set a new one.',
  );
  return true;
}

/** A refused save (a repeated key or name) is a result, not an exception. */
async function trySave(
  save: (candidate: string) => Promise<void>,
  candidate: string,
): Promise<{ ok: true } | { ok: false; result: SetKeyResult }> {
  try {
    await save(candidate);
    return { ok: true };
  } catch (err) {
    const message = `The key was not saved: ${(err as Error).message}`;
    void vscode.window.showErrorMessage(`Loopgate: ${message}`);
    return { ok: false, result: { saved: false, message } };
  }
}

function urlProblemMessage(problems: UrlProblem[]): vscode.InputBoxValidationMessage | undefined {
  const error = problems.find((p) => p.severity === 'error');
  if (error) return { message: error.message, severity: vscode.InputBoxValidationSeverity.Error };
  if (problems.length)
    return { message: problems.map((p) => p.message).join(' '), severity: vscode.InputBoxValidationSeverity.Warning };
  return undefined;
}

/** `value` is for scripted use; '' returns to demo mode. */
export async function setBaseUrl(value?: unknown): Promise<string | undefined> {
  const current = readSettings().baseUrl;
  const input =
    typeof value === 'string'
      ? value
      : await vscode.window.showInputBox({
          title: 'Loopgate: Set Base URL',
          prompt:
            'The Model-Access API address in any form: https://host, https://host/v1, … Leave empty for the embedded simulator (demo mode).',
          value: current,
          ignoreFocusOut: true,
          validateInput: (v) => {
            if (!v.trim()) return undefined;
            const r = parseUpstream(v);
            if (!r.ok) return urlProblemMessage(r.problems);
            return (
              urlProblemMessage(r.problems) ?? {
                message: `{site_url} = ${r.siteUrl}   {base_url} = ${r.baseUrl}`,
                severity: vscode.InputBoxValidationSeverity.Info,
              }
            );
          },
        });
  if (input === undefined) return undefined;
  const trimmed = input.trim();
  if (trimmed) {
    const r = parseUpstream(trimmed);
    if (!r.ok) {
      void vscode.window.showErrorMessage(`Loopgate: ${r.problems.map((p) => p.message).join(' ')}`);
      return undefined;
    }
  }
  await vscode.workspace.getConfiguration('loopgate').update('baseUrl', trimmed, vscode.ConfigurationTarget.Global);
  return trimmed;
}
