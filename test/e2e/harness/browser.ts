// Drives the code-server workbench in headless Chromium (Debian's), the way a
// user would: open the page, click the activity bar, read tree rows, screenshot.
import { appendFileSync, copyFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { CodeServer } from './code-server.js';
import { chromiumPath, repoRoot, testResultsDir } from './paths.js';
import { pollUntil } from './poll.js';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Only loopback names resolve: the page cannot reach the internet even if VS Code tries.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
];

export interface Workbench {
  browser: Browser;
  page: Page;
  url: string;
  close(): Promise<void>;
}

export interface OpenWorkbenchOptions {
  /** Absolute path of a bundled CommonJS entry exporting `run()`. */
  extensionTestsPath?: string;
  /** Defaults to the server's extensionDevelopmentPath. */
  extensionDevelopmentPath?: string;
  /** Wait until `.monaco-workbench` is rendered (default true). */
  waitForWorkbench?: boolean;
  timeoutMs?: number;
  viewport?: { width: number; height: number };
}

function remote(server: CodeServer, absPath: string): string {
  return `vscode-remote://127.0.0.1:${server.port}${resolve(absPath)}`;
}

/** The workbench URL with the development extension and test entry in its payload. */
export function workbenchUrl(
  server: CodeServer,
  opts: Pick<OpenWorkbenchOptions, 'extensionTestsPath' | 'extensionDevelopmentPath'> = {},
): string {
  const payload: [string, string][] = [];
  const devPath = opts.extensionDevelopmentPath ?? server.extensionDevelopmentPath;
  if (devPath) payload.push(['extensionDevelopmentPath', remote(server, devPath)]);
  if (opts.extensionTestsPath) payload.push(['extensionTestsPath', remote(server, opts.extensionTestsPath)]);
  payload.push(['skipWelcome', 'true']);
  return `${server.url}/?folder=${encodeURIComponent(server.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

/** Opens the workbench in a fresh headless Chromium; the page console goes to the server's log file. */
export async function openWorkbench(server: CodeServer, opts: OpenWorkbenchOptions = {}): Promise<Workbench> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: opts.viewport ?? { width: 1400, height: 900 } });
    const log = (line: string) => appendFileSync(server.logFile, `[browser] ${line}\n`);
    page.on('console', (msg) => log(`console.${msg.type()}: ${msg.text()}`));
    page.on('pageerror', (err) => log(`pageerror: ${err.stack ?? err.message}`));
    page.on('requestfailed', (req) => log(`requestfailed: ${req.url()} ${req.failure()?.errorText ?? ''}`));
    const url = workbenchUrl(server, opts);
    log(`goto ${url}`);
    await page.goto(url, { timeout: timeoutMs, waitUntil: 'domcontentloaded' });
    if (opts.waitForWorkbench !== false) {
      await page.locator('.monaco-workbench').first().waitFor({ state: 'visible', timeout: timeoutMs });
    }
    return { browser, page, url, close: () => browser.close() };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/** Saves a full-page PNG as `test-results/<name>.png` and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(testResultsDir, { recursive: true });
  const path = join(testResultsDir, `${name.replace(/[^a-zA-Z0-9._-]+/g, '-')}.png`);
  await page.screenshot({ path });
  return path;
}

/**
 * The README's screenshots come from these runs: with LOOPGATE_UPDATE_MEDIA=1 a
 * shot is also copied to media/<name> (committed). Off by default, so a test
 * run leaves the checkout clean.
 */
export function keepForReadme(shot: string, name: string): void {
  if (process.env.LOOPGATE_UPDATE_MEDIA === '1') copyFileSync(shot, join(repoRoot, 'media', name));
}

/**
 * Clicks the activity-bar item whose accessible name starts with `title`
 * (VS Code appends the keybinding, e.g. "Explorer (Ctrl+Shift+E)") and waits
 * until the side bar shows that container.
 */
export async function clickActivityBarItem(
  page: Page,
  title: string,
  opts: { timeoutMs?: number } = {},
): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const item = page.locator('.part.activitybar').getByRole('tab', { name: new RegExp(`^${escaped}\\b`, 'i') });
  await item.first().waitFor({ state: 'visible', timeout: timeoutMs });
  // Clicking an already-selected container would hide the side bar.
  if ((await item.first().getAttribute('aria-selected')) !== 'true') await item.first().click();
  await pollUntil(
    async () => {
      const label = await page.locator('.part.sidebar .composite.title').first().textContent({ timeout: 1_000 });
      return label?.toLowerCase().includes(title.toLowerCase());
    },
    { timeoutMs, what: `side bar titled "${title}"` },
  );
}

/** Folds (`expanded` false) or unfolds the side bar section titled `title`: a click on its header when needed. */
export async function setPaneExpanded(page: Page, title: string, expanded: boolean): Promise<void> {
  const header = page.locator('.pane-header', { hasText: title }).first();
  if (((await header.getAttribute('aria-expanded')) === 'true') !== expanded) await header.click({ timeout: 5_000 });
}

export interface TreeRow {
  /** The row's accessible name (aria-label), which VS Code builds from label and description. */
  label: string;
  /** The visible text. */
  text: string;
  /** 1 for top-level rows. */
  level: number;
  expanded?: boolean;
}

/**
 * Reads the rendered `role=treeitem` rows in the side bar (or `within`).
 * Waits, polling with a deadline, for at least `minRows` rows and, when given,
 * until `until(rows)` holds (rows load asynchronously).
 */
export async function readTreeRows(
  page: Page,
  opts: { within?: string; minRows?: number; until?: (rows: TreeRow[]) => boolean; timeoutMs?: number } = {},
): Promise<TreeRow[]> {
  const rows = page.locator(`${opts.within ?? '.part.sidebar'} [role="treeitem"]`);
  const minRows = opts.minRows ?? 1;
  const read = () =>
    rows.evaluateAll((els) =>
      els.map((el): TreeRow => {
        const expanded = el.getAttribute('aria-expanded');
        return {
          label: el.getAttribute('aria-label') ?? '',
          text: (el as unknown as { innerText: string }).innerText.trim(),
          level: Number(el.getAttribute('aria-level') ?? '1'),
          ...(expanded === null ? {} : { expanded: expanded === 'true' }),
        };
      }),
    );
  let last: TreeRow[] = [];
  try {
    return await pollUntil(
      async () => {
        last = await read();
        return last.length >= minRows && (!opts.until || opts.until(last)) ? last : undefined;
      },
      {
        timeoutMs: opts.timeoutMs ?? 15_000,
        what: `tree rows (at least ${minRows}${opts.until ? ', matching until()' : ''})`,
      },
    );
  } catch (err) {
    (err as Error).message += `; last rows: ${JSON.stringify(last.map((r) => r.text))}`;
    throw err;
  }
}
