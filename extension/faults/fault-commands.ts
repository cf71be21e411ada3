// `Loopgate: Inject a Fault…` (a common fault → for the next N requests → an
// optional model scope → armed in the proxy through the one local API client,
// source 'editor'), `Loopgate: Clear Faults`, and the status bar item's menu.
// The proxy parses the rule again and says what to fix when it does not parse.
import * as vscode from 'vscode';
import type { ArmedFault } from '../../core/fault.js';
import { LOCAL_ERROR_CODES } from '../../core/local-api.js';
import { localApi, LocalApiError, type LocalApiClient } from '../../client/local-api-client.js';
import type { ProxyHost } from '../proxy-host/host.js';
import { activeFaults, checkModelGlob, checkTimes, FAULT_PRESETS, faultRuleText } from './fault-presets.js';
import type { FaultStatusBar } from './fault-status-bar.js';

export interface FaultDeps {
  host: ProxyHost;
  statusBar: FaultStatusBar;
}

/** What a script or test may pass instead of answering the questions. */
interface FaultArgs {
  rule: string;
  times?: number;
  model?: string;
}

function api(d: FaultDeps): LocalApiClient | undefined {
  const url = d.host.endpoint?.url;
  if (url) return localApi({ url, token: d.host.token });
  void vscode.window.showWarningMessage('Loopgate: the proxy is not running: start it to inject a fault.');
  return undefined;
}

/** What went wrong, in words the user can act on. */
function failure(err: unknown): string {
  if (err instanceof LocalApiError && err.status === 404 && err.code !== LOCAL_ERROR_CODES.unknownFault)
    return 'this proxy cannot inject faults (an older Loopgate?).';
  return (err as Error).message;
}

const CUSTOM = '$(edit) A Rule of My Own…';

async function ask(): Promise<FaultArgs | undefined> {
  const pick = await vscode.window.showQuickPick(
    [
      ...FAULT_PRESETS.map((p) => ({ label: p.label, description: p.rule, detail: p.detail, rule: p.rule })),
      { label: CUSTOM, description: '', detail: 'in the --fault grammar, e.g. 429 times=2 retry-after=5', rule: '' },
    ],
    { title: 'Loopgate: Inject a Fault', placeHolder: 'The fault the proxy answers with', matchOnDescription: true },
  );
  if (!pick) return undefined;
  let rule = pick.rule;
  if (!rule) {
    const typed = await vscode.window.showInputBox({
      title: 'Loopgate: Inject a Fault (a rule of your own)',
      prompt: 'KIND [name=value …], as --fault takes it: 429 retry-after=5, cut events=10, stall seconds=30 …',
      validateInput: (t) => {
        const r = faultRuleText(t);
        return 'problem' in r ? r.problem : undefined;
      },
    });
    if (!typed) return undefined;
    rule = typed;
  }
  const times = await vscode.window.showInputBox({
    title: `Loopgate: Inject "${rule}"`,
    prompt: 'For the next N requests (then the requests pass)',
    value: '1',
    validateInput: checkTimes,
  });
  if (times === undefined) return undefined;
  const model = await vscode.window.showInputBox({
    title: `Loopgate: Inject "${rule}" into the next ${times.trim()} request${times.trim() === '1' ? '' : 's'}`,
    prompt: 'Only for models matching (a glob, e.g. claude-*); empty: any model',
    placeHolder: 'any model',
    validateInput: checkModelGlob,
  });
  if (model === undefined) return undefined;
  return { rule, times: Number(times), model };
}

/** Arms one rule; returns it as the proxy holds it. `arg`: a FaultArgs, or a rule text, to skip the questions. */
export async function injectFault(d: FaultDeps, arg?: unknown): Promise<ArmedFault | undefined> {
  const given =
    typeof arg === 'string'
      ? { rule: arg }
      : arg && typeof (arg as FaultArgs).rule === 'string'
        ? (arg as FaultArgs)
        : undefined;
  const chosen = given ?? (await ask());
  if (!chosen) return undefined;
  const text = faultRuleText(chosen.rule, chosen.model);
  if ('problem' in text) {
    void vscode.window.showWarningMessage(`Loopgate: ${text.problem}`);
    return undefined;
  }
  const client = api(d);
  if (!client) return undefined;
  try {
    const { armed } = await client.armFault({ rule: text.rule, times: chosen.times, source: 'editor' });
    await d.statusBar.refresh();
    const n = armed.remaining;
    void vscode.window.setStatusBarMessage(
      `Loopgate: fault armed: ${armed.text}${n === null ? '' : ` for the next ${n} request${n === 1 ? '' : 's'}`}`,
      5000,
    );
    return armed;
  } catch (err) {
    void vscode.window.showWarningMessage(`Loopgate: the fault was not armed: ${failure(err)}`);
    return undefined;
  }
}

/** Disarms every rule (or the one with id `arg`); returns how many were disarmed. */
export async function clearFaults(d: FaultDeps, arg?: unknown): Promise<number | undefined> {
  const client = api(d);
  if (!client) return undefined;
  try {
    const { disarmed } = await client.disarmFaults(typeof arg === 'number' ? arg : undefined);
    await d.statusBar.refresh();
    void vscode.window.setStatusBarMessage(
      `Loopgate: ${disarmed} fault rule${disarmed === 1 ? '' : 's'} disarmed`,
      5000,
    );
    return disarmed;
  } catch (err) {
    void vscode.window.showWarningMessage(`Loopgate: ${failure(err)}`);
    return undefined;
  }
}

/** The status bar item's click: Disarm All, one rule, or another fault. */
export async function showFaults(d: FaultDeps): Promise<void> {
  await d.statusBar.refresh();
  const active = activeFaults(d.statusBar.armed);
  const pick = await vscode.window.showQuickPick(
    [
      ...(active.length
        ? [{ label: '$(circle-slash) Disarm All', description: `${active.length} armed`, id: -1 }]
        : []),
      ...active.map((a) => ({
        label: `$(close) Disarm #${a.id}`,
        description: a.text,
        detail: a.remaining === null ? 'every matching request' : `${a.remaining} left`,
        id: a.id,
      })),
      { label: '$(zap) Inject a Fault…', description: '', id: 0 },
    ],
    { title: 'Loopgate: Faults', placeHolder: active.length ? 'Armed fault rules' : 'No fault is armed' },
  );
  if (!pick) return;
  if (pick.id === 0) await injectFault(d);
  else await clearFaults(d, pick.id === -1 ? undefined : pick.id);
}
