// `loopgate.openSession`: with a session id (a Traffic view session row, the
// status bar item) it opens the session panel on it; without one (the command
// palette) it lists the sessions in the proxy's memory to pick from.
import * as vscode from 'vscode';
import { sessionLabel } from './session-html.js';
import { sessionListText } from '../../presentation/session-text.js';
import { duration, percent, sessionCostText } from './session-format.js';
import type { SessionPanels } from './session-panel.js';
import { fetchSessions, SessionUnavailable } from './session-reader.js';
import type { ProxyHost } from '../proxy-host/host.js';

export interface SessionDeps {
  host: ProxyHost;
  panels: SessionPanels;
}

/**
 * The session an argument names: the id itself, a summary that carries it (`sessionId`, `session.id`),
 * a session row of the Traffic view (its `group.id`), or a request row (its record's session).
 */
function sessionIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg || undefined;
  const o = arg as
    | {
        sessionId?: unknown;
        session?: { id?: unknown };
        group?: { id?: unknown };
        row?: { record?: { session?: { id?: unknown } } };
      }
    | undefined;
  for (const v of [o?.sessionId, o?.session?.id, o?.group?.id, o?.row?.record?.session?.id])
    if (typeof v === 'string' && v) return v;
  return undefined;
}

export async function openSession(d: SessionDeps, arg?: unknown): Promise<void> {
  const id = sessionIdOf(arg) ?? (await pickSession(d.host));
  if (id) await d.panels.show(id);
}

async function pickSession(host: ProxyHost): Promise<string | undefined> {
  let sessions;
  try {
    sessions = await fetchSessions(host);
  } catch (err) {
    if (!(err instanceof SessionUnavailable)) throw err;
    void vscode.window.showWarningMessage(err.message);
    return undefined;
  }
  if (!sessions.length) {
    void vscode.window.showInformationMessage(
      'No session in the proxy’s memory yet: send a request through Loopgate (or run a tool with `loopgate run`).',
    );
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    sessions.map((s) => ({
      label: `${s.client} · ${s.turns} turn${s.turns === 1 ? '' : 's'}`,
      description: `${sessionCostText(s)} · cache ${percent(s.cacheHitRatio)} · ${sessionListText(s, 'models')}`,
      detail: `${sessionLabel(s.id)} · last ${s.lastSeen.slice(11, 19)} UTC · ${duration(s.durationMs)}${s.errors ? ` · ${s.errors} error(s)` : ''}`,
      id: s.id,
    })),
    {
      title: 'Loopgate: Open Session',
      placeHolder: 'Sessions in the proxy’s memory, most recent first',
      matchOnDescription: true,
    },
  );
  return pick?.id;
}
