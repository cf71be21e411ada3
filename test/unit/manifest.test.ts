// The manifest (package.json `contributes`) is the registry of commands, views,
// menus and settings; these checks keep it and the extension's code in step.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BRIDGE, DEFAULT_PORT } from '../../core/options.js';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const c = pkg.contributes;
const source = (rel: string) => readFileSync(join(root, rel), 'utf8');

/** Ids registered by extension/commands/index.ts's table. */
function registeredIds(): string[] {
  const table = source('extension/commands/index.ts');
  return [...table.matchAll(/^\s*'(loopgate\.[A-Za-z]+)':/gm)].map((m) => m[1]!);
}

const contributed: string[] = c.commands.map((x: { command: string }) => x.command);

describe('manifest', () => {
  it('contributes exactly the commands the extension registers', () => {
    const registered = registeredIds();
    expect(registered.length).toBeGreaterThan(10);
    expect([...contributed].sort()).toEqual([...registered].sort());
    expect(new Set(contributed).size).toBe(contributed.length);
  });

  it('names commands loopgate.<verb> with the title "Loopgate: …"', () => {
    for (const cmd of c.commands) {
      expect(cmd.command).toMatch(/^loopgate\.[a-z][A-Za-z]+$/);
      expect(cmd.category).toBe('Loopgate');
      expect(cmd.title).not.toMatch(/^Loopgate/);
    }
  });

  it('has menus and welcome links that point only at contributed commands', () => {
    const menuCommands = Object.values(c.menus as Record<string, { command: string }[]>)
      .flat()
      .map((m) => m.command);
    for (const id of menuCommands) expect(contributed).toContain(id);
    const links = c.viewsWelcome.flatMap((w: { contents: string }) =>
      [...w.contents.matchAll(/\(command:([\w.]+)\)/g)].map((m) => m[1]),
    );
    expect(links.length).toBeGreaterThan(0);
    for (const id of links) expect(contributed).toContain(id);
  });

  it('chooses item menus by viewItem == clauses on contextValues the nodes really set', () => {
    const nodes = source('extension/views/nodes.ts') + source('extension/traffic/traffic-tree.ts');
    const contextValues = new Set(
      [...nodes.matchAll(/contextValue = ([^;]+);/g)].flatMap((m) =>
        [...m[1]!.matchAll(/'([A-Za-z]+)'/g)].map((x) => x[1]!),
      ),
    );
    const clauses = c.menus['view/item/context'].flatMap((m: { when: string }) =>
      [...m.when.matchAll(/viewItem == (\w+)/g)].map((x) => x[1]),
    );
    expect(clauses.length).toBeGreaterThan(0);
    for (const v of clauses) expect(contextValues).toContain(v);
  });

  it('has welcome views for no base URL and no key, each with a button', () => {
    const whens = c.viewsWelcome.map((w: { when: string }) => w.when);
    expect(whens).toContain('!loopgate.hasBaseUrl');
    expect(whens).toContain('loopgate.hasBaseUrl && !loopgate.hasKey');
    for (const w of c.viewsWelcome) expect(w.contents).toMatch(/\[[^\]]+\]\(command:/);
  });

  it('puts a Loopgate container with an icon from media/ in the activity bar, holding the Models and Traffic views', () => {
    const container = c.viewsContainers.activitybar.find((v: { id: string }) => v.id === 'loopgate');
    expect(container.title).toBe('Loopgate');
    expect(container.icon).toMatch(/^media\//);
    expect(existsSync(join(root, container.icon))).toBe(true);
    expect(c.views.loopgate.map((v: { id: string; name: string }) => [v.id, v.name])).toEqual([
      ['loopgate.models', 'Models'],
      ['loopgate.traffic', 'Traffic'],
    ]);
  });

  it('declares the settings with their defaults', () => {
    const p = c.configuration.properties;
    expect(p['loopgate.baseUrl'].default).toBe('');
    expect(p['loopgate.proxy.port'].default).toBe(8787);
    expect(p['loopgate.proxy.autoStart'].default).toBe(true);
    expect(p['loopgate.proxy.logBodies'].default).toBe(false);
    expect(p['loopgate.proxy.requireToken'].default).toBe(true);
    expect(p['loopgate.proxy.bridge'].enum).toEqual(['auto', 'off', 'always']);
    expect(p['loopgate.terminal.injectEnv'].default).toBe(true);
    // Where spans go is the machine's owner's decision: a workspace cannot set it (and it is read from user settings only).
    expect(p['loopgate.otlp.endpoint']).toMatchObject({ type: 'string', default: '', scope: 'machine' });
    expect(p['loopgate.otlp.captureContent']).toMatchObject({ type: 'boolean', default: false, scope: 'machine' });
    // The collector's headers are a secret: a command stores them in SecretStorage, no setting holds them.
    expect(contributed).toContain('loopgate.setOtlpHeaders');
    expect(Object.keys(p).filter((k) => /header/i.test(k))).toEqual([]);
    // Declared only so a key pasted there can be removed; marked deprecated.
    expect(p['loopgate.apiKey'].markdownDeprecationMessage).toMatch(/SecretStorage/);
  });

  it('gives the proxy settings the defaults the proxy and the CLI use (core/options.ts)', () => {
    const p = c.configuration.properties;
    expect(p['loopgate.proxy.port'].default).toBe(DEFAULT_PORT);
    expect(p['loopgate.proxy.bridge'].default).toBe(DEFAULT_BRIDGE);
  });

  it('reads every declared setting in extension/settings.ts (schema → type → one reader)', () => {
    const reader = source('extension/settings.ts');
    for (const name of Object.keys(c.configuration.properties)) {
      if (name === 'loopgate.apiKey') continue; // read only by the migration in secrets.ts
      const leaf = name.replace(/^loopgate\./, '');
      expect(reader, name).toContain(`'${leaf}'`);
    }
  });

  it('activates lazily: on the view, on commands, or on a workspace with tool config', () => {
    expect(pkg.activationEvents).toContain('onView:loopgate.models');
    expect(pkg.activationEvents).toContain('workspaceContains:**/.env');
    expect(pkg.activationEvents).toContain('workspaceContains:**/.codex/config.toml');
    expect(pkg.activationEvents).not.toContain('*');
    expect(pkg.activationEvents).not.toContain('onStartupFinished');
  });

  it('packages only the bundles, media (icon, README screenshots) and docs', () => {
    const ignore = source('.vscodeignore')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    expect(ignore[0]).toBe('**');
    expect(ignore.filter((l) => l.startsWith('!')).sort()).toEqual(
      [
        '!LICENSE',
        '!README.md',
        '!dist/cli.js',
        '!dist/detail-page.js',
        '!dist/extension.js',
        '!dist/otlp-worker.js',
        '!dist/tokenizer-worker.js',
        '!dist/server.js',
        '!dist/session-page.js',
        '!media/**',
        '!package.json',
      ].sort(),
    );
    expect(pkg.scripts.package).toMatch(/vsce\.mjs package/);
  });
});
