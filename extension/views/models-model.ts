// The Model Explorer's data: fetches GET /v1/models through the proxy, keeps
// probe results and the filter, and fires a change event. No tree code here.
import * as vscode from 'vscode';
import { diagnose, parseErrorBody } from '../../rules/diagnosis/diagnose.js';
import { readErrorEnvelope } from '../../rules/diagnosis/proxy-errors.js';
import { setContextKey } from '../context-keys.js';
import type { ProxyHost } from '../proxy-host/host.js';
import { parseModelList } from '../../rules/wire/model-list.js';
import { MODELS_PATH } from '../../rules/protocols/index.js';
import { OWN_REQUEST_HEADER } from '../../core/local-api.js';
import { isUnsupported, tryProtocol } from '../protocol-trials.js';
import { PROTOCOL_ORDER, type Protocol } from '../../rules/protocols/index.js';
import { modelInfo, parseKeyModels, type KeyModelsInfo, type ModelInfo } from './explorer-list.js';
import { readSettings } from '../settings.js';
import { NO_KEY_MESSAGE } from '../no-key.js';
import { localApi, LocalApiError } from '../../client/local-api-client.js';
import { type ModelEntry } from '../../core/routing-facts.js';

/** Something wrong, with the command that fixes it. */
export interface Problem {
  title: string;
  detail: string;
  /** HTTP status, or undefined for a network error. */
  status?: number;
  diagnosis?: string;
  fix: { command: string; title: string };
}

export type ModelsState =
  | { kind: 'idle' }
  | { kind: 'loading' }
  | {
      kind: 'loaded';
      models: ModelInfo[];
      /** The list entries as the proxy gave them (limits, modalities: what the chat provider reads). */
      entries: readonly ModelEntry[];
      simulator: boolean;
      /** With several keys: each key's models and the route each model takes (the tree groups by key). */
      byKey?: KeyModelsInfo[];
    }
  | { kind: 'problem'; problem: Problem };

const STATUS_TITLES: Record<number, string> = {
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  429: '429 Too Many Requests',
};

/**
 * Which command fixes a failed GET /models. Routes on the status (and the
 * relay's error code, through diagnose), never on the message text, which
 * relays localise; the message is only shown.
 */
function problemFor(status: number, body: string, diagnosisHeader: string | undefined): Problem {
  const info = parseErrorBody(status, body);
  const d = diagnose(info, { method: 'GET', originalPath: MODELS_PATH, canonicalPath: MODELS_PATH, time: new Date() });
  const message = readErrorEnvelope(body)?.message ?? '';
  const detail = [d?.hint, message && `Upstream said: ${message}`].filter(Boolean).join(' ');
  const title = STATUS_TITLES[status] ?? `HTTP ${status}`;
  const fix =
    status === 401
      ? { command: 'loopgate.setApiKey', title: 'Set a new API key' }
      : status === 403
        ? { command: 'loopgate.setApiKey', title: 'Use a key whose group has access' }
        : status === 404
          ? { command: 'loopgate.setBaseUrl', title: 'Correct the base URL' }
          : status >= 502 && status <= 504
            ? { command: 'loopgate.setBaseUrl', title: 'Check the base URL' }
            : { command: 'loopgate.runDiagnosis', title: 'Run the diagnosis' };
  return {
    title,
    detail: detail || `GET /models failed with HTTP ${status}.`,
    status,
    diagnosis: diagnosisHeader ?? d?.code,
    fix,
  };
}

export class ModelsModel implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;
  private current: ModelsState = { kind: 'idle' };
  private filterText = '';
  private generation = 0;

  /** `hasKey`: whether a key is stored (without one, a real upstream is not asked: it could only answer 401). */
  constructor(
    private readonly host: ProxyHost,
    private readonly hasKey: () => boolean = () => true,
  ) {}

  get state(): ModelsState {
    return this.current;
  }

  get filter(): string {
    return this.filterText;
  }

  setFilter(text: string): void {
    this.filterText = text.trim();
    void setContextKey('loopgate.filterActive', this.filterText.length > 0);
    this.emitter.fire();
  }

  /** Models passing the filter (matched on id and provider, case-insensitive). */
  visibleModels(): ModelInfo[] {
    if (this.current.kind !== 'loaded') return [];
    return this.filtered(this.current.models);
  }

  /** `models` that pass the filter. */
  filtered(models: ModelInfo[]): ModelInfo[] {
    const f = this.filterText.toLowerCase();
    return f ? models.filter((m) => m.id.toLowerCase().includes(f) || m.ownedBy.toLowerCase().includes(f)) : models;
  }

  clear(): void {
    this.generation++;
    this.set({ kind: 'idle' });
  }

  /** The list for the chat provider (its ChatProviderDeps.readModels): the entries, or why there are none. */
  async forChat(): Promise<{ entries: readonly ModelEntry[] } | { failure: string }> {
    const state = await this.settled();
    if (state.kind === 'loaded') return { entries: state.entries };
    if (state.kind === 'problem')
      return {
        failure: `GET /v1/models through the proxy: ${state.problem.title}${state.problem.diagnosis ? ` [${state.problem.diagnosis}]` : ''}`,
      };
    return { failure: 'the proxy is not running' };
  }

  /**
   * The list as the last refresh left it, after the one in flight; the first
   * refresh when none ran yet. Readers that ask often (vscode.lm consumers
   * call selectChatModels in loops) get this instead of a request upstream.
   */
  async settled(): Promise<ModelsState> {
    if (this.current.kind === 'idle' && this.host.endpoint) return this.refresh();
    while (this.current.kind === 'loading') {
      await new Promise<void>((resolve) => {
        const sub = this.emitter.event(() => {
          sub.dispose();
          resolve();
        });
      });
    }
    return this.current;
  }

  /** Fetches the list through the proxy; resolves with the new state. */
  async refresh(fromUpstream = false): Promise<ModelsState> {
    const endpoint = this.host.endpoint;
    const gen = ++this.generation;
    if (!endpoint) return this.set({ kind: 'idle' });
    if (!endpoint.simulator && !this.hasKey()) {
      return this.set({
        kind: 'problem',
        problem: {
          title: 'No API key',
          detail: NO_KEY_MESSAGE,
          fix: { command: 'loopgate.setApiKey', title: 'Set API Key' },
        },
      });
    }
    this.set({ kind: 'loading' });
    let next: ModelsState;
    try {
      // A key's group may have changed: the proxy's routing reads its cached lists, so renew them.
      if (fromUpstream)
        await localApi({ url: endpoint.url, token: this.host.token })
          .refresh({ timeoutMs: 30_000 })
          .catch((err: unknown) => {
            // A refusal here still lets the list load (as before); an unreachable proxy is reported below.
            if (!(err instanceof LocalApiError)) throw err;
          });
      const res = await fetch(endpoint.url + MODELS_PATH, {
        // Marked as the editor's own: logged, but kept out of the Traffic view (no real request made it).
        headers: { authorization: `Bearer ${this.host.token}`, [OWN_REQUEST_HEADER]: 'models' },
        signal: AbortSignal.timeout(30_000),
        redirect: 'manual',
      });
      const body = await res.text();
      if (res.ok) {
        const list = parseModelList(body);
        const entries = list.ok ? list.models : [];
        next = {
          kind: 'loaded',
          models: entries.map(modelInfo),
          entries,
          simulator: endpoint.simulator,
          byKey: await this.keyModels(endpoint.url),
        };
      } else
        next = {
          kind: 'problem',
          problem: problemFor(res.status, body, res.headers.get('x-loopgate-diagnosis') ?? undefined),
        };
    } catch (err) {
      next = {
        kind: 'problem',
        problem: {
          title: 'Proxy unreachable',
          detail: `Could not reach the Loopgate proxy at ${endpoint.url} (${(err as Error).message}). Start it again.`,
          fix: { command: 'loopgate.startProxy', title: 'Start the proxy' },
        },
      };
    }
    if (gen !== this.generation) return this.current;
    return this.set(next);
  }

  /** Each key's list from the proxy, when it holds several (undefined otherwise, or from an older proxy). */
  private async keyModels(url: string): Promise<KeyModelsInfo[] | undefined> {
    try {
      const answer = await localApi({ url, token: this.host.token }).keys({ timeoutMs: 30_000 });
      const keys = parseKeyModels(answer, readSettings().proxy.bridge ?? 'auto');
      return keys.length > 1 ? keys : undefined;
    } catch {
      return undefined;
    }
  }

  /** Finds the protocols of a model without `supported_endpoint_types` by minimal requests. */
  async probe(modelId: string): Promise<Protocol[]> {
    const endpoint = this.host.endpoint;
    if (!endpoint || this.current.kind !== 'loaded') throw new Error('The model list is not loaded.');
    const found: Protocol[] = [];
    for (const p of PROTOCOL_ORDER) {
      const r = await tryProtocol(endpoint.url, this.host.token, modelId, p);
      if (r.status >= 200 && r.status < 300) found.push(p);
      else if (!isUnsupported(r) && r.status !== 400)
        throw new Error(`Probing ${p} failed: HTTP ${r.status} ${r.error ?? ''}`.trim());
    }
    if (this.current.kind === 'loaded') {
      const models = this.current.models.map((m) => (m.id === modelId ? { ...m, protocols: found, probed: true } : m));
      this.set({ ...this.current, models });
    }
    return found;
  }

  dispose(): void {
    this.emitter.dispose();
  }

  private set(state: ModelsState): ModelsState {
    this.current = state;
    this.emitter.fire();
    return state;
  }
}
