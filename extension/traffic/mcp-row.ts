// An MCP call's row in the Traffic view (issue 43): it sits in its session's timeline between the model
// requests, named by its server and tool, with its time, the result's size and how it ended.
import * as vscode from 'vscode';
import type { McpCall } from '../../core/record.js';
import type { RowRecord } from '../../core/local-api.js';

export function asMcpRow(item: vscode.TreeItem, r: RowRecord, mcp: McpCall, stale: boolean): void {
  const name = mcp.target ? `${mcp.rpcMethod} ${mcp.target}` : mcp.rpcMethod;
  item.label = `MCP ${mcp.server} ${name}`;
  const code = r.diagnosis ?? r.errorCode;
  item.description = [
    stale ? '(stale)' : '',
    String(r.status || '---'),
    `${Math.round(r.totalMs)}ms`,
    mcp.resultTokens !== undefined ? `result ~${mcp.resultTokens} tok` : '',
    mcp.transport === 'stdio' ? 'stdio' : '',
    code ? `[${code}]` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  item.iconPath = code
    ? new vscode.ThemeIcon('tools', new vscode.ThemeColor('testing.iconFailed'))
    : new vscode.ThemeIcon('tools');
  // No resend or replay menus: an MCP call is not a model request.
  item.contextValue = 'trafficMcp';
  item.tooltip = `MCP call to ${mcp.server} (${mcp.transport}): ${name}${mcp.error ? `, failed: ${mcp.error.message}` : ''}`;
  item.accessibilityInformation = { label: `MCP call ${mcp.server} ${name}, status ${r.status}` };
}
