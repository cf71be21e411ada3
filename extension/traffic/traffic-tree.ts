// The Traffic view: one row per request, newest first, the requests under way
// on top; or (loopgate.traffic.groupBySession) one row per agent session with
// its requests under it. Its title says what hides rows (a filter, Pause), its
// message why the list is empty or stale. Decides nothing, maps rows.
import { asMcpRow } from './mcp-row.js';
import * as vscode from 'vscode';
import { failed, modelLabel, shortId, tokensLabel } from '../../presentation/render.js';
import type { TrafficList, InFlightRow } from './traffic-list.js';
import { type TrafficRow } from '../../core/local-api.js';
import { describeGroup, groupBySession, NO_SESSION, type SessionGroup } from './session-groups.js';
import type { DetailPanels } from './detail-panel.js';
import { readSettings } from '../settings.js';
import { faultLabel, faultSentence } from './traffic-marks.js';
import { isCassetteMiss } from '../../rules/cassettes/cassette-exchange.js';

/** The setting and the context key the view's Group by Session / Show as List actions switch. */
export const GROUP_SETTING = 'traffic.groupBySession';
const GROUP_CONTEXT = 'loopgate.trafficGrouped';

export class TrafficItem extends vscode.TreeItem {
  constructor(
    readonly row: TrafficRow,
    stale = false,
  ) {
    const r = row.record;
    super(`${r.method} ${r.path}${r.rewrites.length ? ' *' : ''}`, vscode.TreeItemCollapsibleState.None);
    // Stable per request: VS Code keeps the selection and focus across redraws.
    this.id = r.id;
    const route = r.key ? `${r.key} ${r.bridge ? 'bridged' : 'native'}` : r.bridge ? 'bridged' : '';
    // The whole prompt with its cached share: a session's rows add up to the session row's tokens.
    const tokens = tokensLabel(r);
    const code = r.diagnosis ?? r.errorCode;
    this.description = [
      stale ? '(stale)' : '',
      String(r.status || '---'),
      // The client left before the answer ended: the status is what the upstream began, not what it delivered.
      r.clientAborted ? 'abandoned by the client' : '',
      modelLabel(r),
      route,
      `${ms(r.ttfbMs)}/${ms(r.totalMs)}`,
      tokens,
      code ? `[${code}]` : '',
      r.fault ? faultLabel(r.fault) : '',
      r.replayOf ? 'replay' : '',
    ]
      .filter(Boolean)
      .join(' · ');
    // An injected answer is marked as such first: its failure is the test, not a problem.
    this.iconPath = r.fault
      ? new vscode.ThemeIcon('zap', new vscode.ThemeColor('charts.orange'))
      : isCassetteMiss(r)
        ? new vscode.ThemeIcon('debug-breakpoint-unsupported', new vscode.ThemeColor('testing.iconFailed'))
        : failed(r)
          ? new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'))
          : r.clientAborted
            ? new vscode.ThemeIcon('debug-disconnect', new vscode.ThemeColor('testing.iconQueued'))
            : r.stream
              ? new vscode.ThemeIcon('pulse')
              : new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed'));
    this.tooltip = new vscode.MarkdownString(
      [
        `**${r.method} ${escapeMd(r.path)}** → ${r.status || 'no answer'}`,
        r.clientAborted ? 'The client abandoned the answer before it ended.' : '',
        r.fault ? `$(zap) ${escapeMd(faultSentence(r.fault))} The panel shows what the client did next.` : '',
        isCassetteMiss(r)
          ? 'Cassette miss: no recording matched this request and nothing went upstream; the panel shows where it differs.'
          : '',
        stale ? 'From before the traffic feed stopped: no longer updated.' : '',
        r.rewrites.length ? `rewritten: ${r.rewrites.map(escapeMd).join('; ')}` : '',
        `${r.time} · request ${shortId(r.id)}`,
      ]
        .filter(Boolean)
        .join('\n\n'),
      // $(zap) as the icon; every value from outside is escaped above, so none of its text can become one.
      true,
    );
    this.contextValue = r.bridge ? 'trafficBridged' : 'trafficRequest';
    this.command = { command: 'loopgate.openRequest', title: 'Open Request', arguments: [r.id, 'list'] };
    this.accessibilityInformation = {
      label: `${r.method} ${r.path}, status ${r.status}${r.clientAborted ? ', abandoned by the client' : ''}${r.fault ? `, ${faultLabel(r.fault)} injected` : ''}, ${modelLabel(r) ?? ''}`,
    };
    // An MCP call (issue 43) between the model requests: named by its server and tool.
    if (r.mcp) asMcpRow(this, r, r.mcp, stale);
  }
}

/** A request still under way: what has arrived of its answer so far, and for how long it has run. */
class InFlightItem extends vscode.TreeItem {
  constructor(readonly request: InFlightRow) {
    const q = request;
    super(`${q.method} ${q.path}`, vscode.TreeItemCollapsibleState.None);
    // The finished row takes the same id: the selection stays on the request when it ends.
    this.id = q.id;
    const elapsed = q.elapsedMs + (Date.now() - q.receivedAt);
    const route = q.key ? `${q.key} ${q.bridge ? 'bridged' : 'native'}` : q.bridge ? 'bridged' : '';
    this.description = [
      'in flight',
      q.status ? String(q.status) : '',
      q.model,
      route,
      `${(elapsed / 1000).toFixed(1)} s`,
      q.events ? `${q.events} ${q.events === 1 ? 'event' : 'events'}` : '',
      q.bytes ? bytes(q.bytes) : '',
    ]
      .filter(Boolean)
      .join(' · ');
    this.iconPath = new vscode.ThemeIcon('loading~spin');
    this.tooltip = `${q.method} ${q.path}: under way since ${q.time.slice(11, 19)} (request ${shortId(q.id)}); the row shows the finished request when it ends.`;
    this.contextValue = 'trafficInFlight';
    this.accessibilityInformation = { label: `${q.method} ${q.path}, in flight, ${q.model ?? ''}` };
  }
}

class SessionItem extends vscode.TreeItem {
  constructor(readonly group: SessionGroup) {
    super(
      // Ids read `client:key`, `run:tool-nonce`, `single:request-id`: the client, then the key's start.
      group.id === NO_SESSION ? 'No session' : `${group.client} ${group.id.split(':').pop()!.slice(0, 8)}`,
      vscode.TreeItemCollapsibleState.Expanded,
    );
    this.id = `session:${group.id}`;
    this.description = describeGroup(group);
    this.iconPath = new vscode.ThemeIcon(group.errors ? 'warning' : 'comment-discussion');
    this.tooltip = new vscode.MarkdownString(
      [
        `**Session** \`${escapeMd(group.id)}\` (${escapeMd(group.client)})`,
        describeGroup(group),
        'Cost is estimated from list prices, never billed.',
      ].join('\n\n'),
    );
    // A click opens the session panel (its menu has Open Session too); the requests tied to no session have none.
    this.contextValue = group.id === NO_SESSION ? 'trafficNoSession' : 'trafficSession';
    if (group.id !== NO_SESSION)
      this.command = { command: 'loopgate.openSession', title: 'Open Session', arguments: [group.id] };
    this.accessibilityInformation = { label: `Session ${String(this.label)}, ${describeGroup(group)}` };
  }
}

type Node = TrafficItem | InFlightItem | SessionItem;

function ms(n: number | undefined): string {
  return n === undefined ? '-' : `${Math.round(n)}ms`;
}

function bytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`;
}

function escapeMd(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|]/g, '\\$&');
}

class TrafficTreeProvider implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subscriptions: vscode.Disposable[];
  grouped = readGrouped();

  constructor(private readonly list: TrafficList) {
    void vscode.commands.executeCommand('setContext', GROUP_CONTEXT, this.grouped);
    list.followSessions(this.grouped);
    this.subscriptions = [
      list.onDidChange(() => this.emitter.fire()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration(`loopgate.${GROUP_SETTING}`)) return;
        this.grouped = readGrouped();
        list.followSessions(this.grouped);
        void vscode.commands.executeCommand('setContext', GROUP_CONTEXT, this.grouped);
        this.emitter.fire();
      }),
    ];
  }

  getTreeItem(item: Node): vscode.TreeItem {
    return item;
  }

  /** The session above a request when grouped (VS Code's reveal needs it); top-level rows otherwise. */
  getParent(item: Node): Node | undefined {
    if (!this.grouped || !(item instanceof TrafficItem)) return undefined;
    const group = groupBySession(this.list.visible(), this.list.sessionTotals).find((g) =>
      g.rows.some((r) => r.record.id === item.row.record.id),
    );
    return group && new SessionItem(group);
  }

  getChildren(item?: Node): Node[] {
    if (item instanceof SessionItem) return item.group.rows.map((row) => new TrafficItem(row, this.list.stale));
    if (item) return [];
    const underWay = this.list.underWay().map((q) => new InFlightItem(q));
    if (this.grouped)
      return [
        ...underWay,
        ...groupBySession(this.list.visible(), this.list.sessionTotals).map((g) => new SessionItem(g)),
      ];
    return [...underWay, ...this.list.visible().map((row) => new TrafficItem(row, this.list.stale))];
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.emitter.dispose();
  }
}

function readGrouped(): boolean {
  return readSettings().traffic.groupBySession;
}

/** The view's title while something hides rows: "1 of 25 · filtered", "paused · 3 waiting". */
function viewDescription(list: TrafficList): string | undefined {
  const c = list.counts();
  const parts = [];
  if (list.filtered) parts.push(`${c.shown} of ${c.total} · filtered`);
  if (list.paused) parts.push(`paused · ${c.waiting} waiting`);
  return parts.length ? parts.join(' · ') : undefined;
}

/** Why the view shows nothing, or rows that no longer update; nothing when it shows live rows. */
function viewMessage(list: TrafficList): string | undefined {
  if (list.status)
    return list.stale ? `${list.status} The rows below are from before and no longer update.` : list.status;
  if (list.counts().shown > 0) return undefined;
  if (list.filtered) return 'No request matches the filter (Filter Traffic, empty, shows them all).';
  return 'No requests yet: each request through the proxy appears here as soon as it starts.';
}

/** The Traffic view: its tree, title and message kept current, and the detail panel following the selection. */
export function createTrafficView(
  list: TrafficList,
  panels: DetailPanels,
): { view: vscode.TreeView<Node>; provider: TrafficTreeProvider; disposables: vscode.Disposable[] } {
  const provider = new TrafficTreeProvider(list);
  const view = vscode.window.createTreeView('loopgate.traffic', { treeDataProvider: provider });
  const describe = () => {
    // A teammate's log opened read-only says so in place of the live counts (traffic/shared-log.ts).
    view.description = list.sharedLog ? `shared log: ${list.sharedLog} (read-only)` : viewDescription(list);
    view.message = viewMessage(list);
  };
  describe();
  const disposables = [
    provider,
    view,
    list.onDidChange(describe),
    // ↑/↓ move the selection: an open panel shows the selected request, and the list keeps the keyboard.
    view.onDidChangeSelection((e) => {
      const item = e.selection.length === 1 ? e.selection[0] : undefined;
      if (!(item instanceof TrafficItem) || !panels.isOpen) return;
      if (panels.entry?.record.id === item.row.record.id) return;
      void panels.show(item.row.record.id, { preserveFocus: true }).catch(() => undefined);
    }),
  ];
  return { view, provider, disposables };
}
