// What models are priced as, from their sources, strongest first: the nearest
// loopgate.json's "prices" (this project), the `loopgate.prices` setting (the
// editor's), and in demo mode the simulator fixture's `priced_as` (start-serve.ts).
// An entry with a problem is left out and said; pricing is an estimate, so a
// bad price never stops the proxy.
import { loadProjectFile } from '../storage/config/find-project-file.js';
import { parseJsonTree } from '../rules/json/json-tree.js';
import { readPriceTable } from '../rules/sessions/price-table.js';
import type { PriceOverrides } from '../rules/sessions/pricing.js';

export interface PriceSources {
  projectDir?: string;
  /** The `loopgate.prices` setting: the same shape as loopgate.json's "prices". */
  setting?: unknown;
}

export function resolvePrices(src: PriceSources): { prices: PriceOverrides; problems: string[] } {
  const problems: string[] = [];
  let fromSetting: PriceOverrides = {};
  if (src.setting !== undefined && src.setting !== null) {
    const text = JSON.stringify(src.setting);
    const tree = parseJsonTree(text);
    if (tree.ok) {
      const table = readPriceTable(tree.root, text);
      fromSetting = table.prices;
      for (const p of table.problems) problems.push(`loopgate.prices: ${p.message}`);
    }
  }
  const loaded = src.projectDir === undefined ? undefined : loadProjectFile(src.projectDir);
  // loopgate.json's own problems are said where its aliases are read (cli/aliases.ts).
  const fromFile = loaded?.ok ? loaded.read.prices : {};
  return { prices: { ...fromSetting, ...fromFile }, problems };
}
