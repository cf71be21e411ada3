// What fills a turn's context, one colour per kind of part: the request
// Overview's bar and the session panel's draw with this one set (issue 42: they
// differed). The session panel's tokens chart, on the same page, gives blue,
// purple, green and yellow to cache read, cache write, uncached input and
// output, and red to a miss: none of those is used here. Classes on VS Code's
// theme variables (the webviews' CSP has no inline styles).
import type { ContextPart } from '../core/agent-session.js';

/** A part's class: the bar's segment and its legend swatch. */
export const CONTEXT_CLASS: Record<ContextPart['kind'], string> = {
  system: 'cx-system',
  tools: 'cx-tools',
  history: 'cx-history',
  'tool-results': 'cx-results',
  'new-turn': 'cx-new',
};

/** The set, for each page's stylesheet: the prefix (system, tools) in orange, the conversation in the foreground. */
export const CONTEXT_COLOURS = `
.cx-system { fill: var(--vscode-charts-orange); background: var(--vscode-charts-orange); }
.cx-tools { fill: var(--vscode-charts-orange); background: var(--vscode-charts-orange); opacity: 0.5; }
.cx-history { fill: var(--vscode-charts-foreground); background: var(--vscode-charts-foreground); opacity: 0.3; }
.cx-results { fill: var(--vscode-charts-foreground); background: var(--vscode-charts-foreground); opacity: 0.55; }
.cx-new { fill: var(--vscode-charts-foreground); background: var(--vscode-charts-foreground); opacity: 0.9; }
`;
