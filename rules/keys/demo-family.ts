// Demo mode's model families. The demo keys are fictional, and the agents move
// their default model on faster than the bundled fixture: Codex 0.171.0 asks for
// gpt-6.2-sol where the demo lists gpt-6.1-sol. In demo mode only (the embedded
// simulator started by `loopgate serve` with its demo keys) a model the fixture
// lacks is served as the closest demo model of its family, and the answer says
// so (SERVED_MODEL_HEADER, its `model` field). A real upstream, and the
// simulator with a user's fixture, never guess a model. Pure, no I/O: the proxy
// routes by these rules, the simulator (simulator/fixture.ts) serves by them.

/** The simulator's answer names the model it served in place of the one asked for (demo mode only). */
export const SERVED_MODEL_HEADER = 'x-sim-served-model';

interface FamilyVersion {
  /** The name without its version numbers, e.g. `gpt-sol` for gpt-6.2-sol, `claude-opus` for claude-opus-5-5. */
  family: string;
  /** Its version numbers in order, e.g. [6, 2]. */
  version: number[];
}

/** A snapshot date at the end (claude-opus-5-5-20261101, gpt-6.1-sol-2026-10-01) does not make a new version. */
const DATE_SUFFIX = /[-_@](?:\d{8}|\d{4}-\d{2}-\d{2})$/;
/** Model IDs as /v1/models lists them: printable ASCII without spaces. */
const MODEL_ID = /^[\x21-\x7e]{1,200}$/;
const VERSION_PART = /^\d{1,6}$/;

/**
 * A model ID's family and version, or undefined when it has no version number
 * or no name (deepseek-chat, gpt-4o-mini and o4-mini have no version part of
 * their own: `4o` and `o4` are names, and such IDs never fall back).
 */
export function familyOf(id: string): FamilyVersion | undefined {
  if (!MODEL_ID.test(id)) return undefined;
  const parts = id.toLowerCase().replace(DATE_SUFFIX, '').split(/[-._]/);
  if (parts.some((p) => p === '')) return undefined;
  const name: string[] = [];
  const version: number[] = [];
  for (const p of parts) {
    if (VERSION_PART.test(p)) version.push(Number(p));
    else name.push(p);
  }
  if (name.length === 0 || version.length === 0) return undefined;
  return { family: name.join('-'), version };
}

/** Negative when `a` is older than `b`; a missing part counts as 0 (5 is 5.0). */
export function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The demo model to serve for `requested`, which `available` does not list:
 * of the IDs of the same family, the newest not newer than the request (a newer
 * release asks for what the demo has, the latest of it); only when every one
 * is newer, the oldest of them. Undefined when the request is listed, or no
 * listed ID is of its family (an unrelated name never matches).
 */
export function closestDemoModel(requested: string, available: readonly string[]): string | undefined {
  if (available.includes(requested)) return undefined;
  const asked = familyOf(requested);
  if (!asked) return undefined;
  const kin = available.flatMap((id) => {
    const f = familyOf(id);
    return f && f.family === asked.family ? [{ id, version: f.version }] : [];
  });
  // Newest first; one version listed twice (a dated snapshot and its alias) goes to the shorter ID, then by name.
  kin.sort(
    (a, b) =>
      compareVersions(b.version, a.version) || a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const older = kin.find((k) => compareVersions(k.version, asked.version) <= 0);
  return (older ?? kin[kin.length - 1])?.id;
}

/** The demo answers this model: it lists it, or serves it as its family's closest (an unknown family: no). */
export function demoCovers(requested: string, available: readonly string[]): boolean {
  return available.includes(requested) || closestDemoModel(requested, available) !== undefined;
}
