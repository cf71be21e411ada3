// Running things (a simulator, a stack, a receiver): one shared by the tests of a file or a describe block, or
// one a test starts for itself, closed after it.
import { afterAll, afterEach, beforeAll } from 'vitest';

/**
 * `const sim = sharedForAll(() => start())`: started in beforeAll and closed in afterAll of the block this is
 * called in. The handle forwards every property to the started value; touching it before beforeAll ran throws.
 */
export function sharedForAll<T extends { close(): unknown }>(start: () => Promise<T>, timeoutMs?: number): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await start();
  }, timeoutMs);
  afterAll(async () => {
    await value?.close();
  });
  const started = (): T => {
    if (!value) throw new Error('used before its beforeAll started it');
    return value;
  };
  return new Proxy({} as T, {
    get: (_t, prop) => {
      const target = started();
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
    set: (_t, prop, v) => Reflect.set(started(), prop, v),
    has: (_t, prop) => Reflect.has(started(), prop),
    ownKeys: () => Reflect.ownKeys(started()),
    getOwnPropertyDescriptor: (_t, prop) => {
      const d = Reflect.getOwnPropertyDescriptor(started(), prop);
      return d && { ...d, configurable: true };
    },
  });
}

/**
 * `const closing = closedAfterEach()` in a file or block: `closing(await start())` hands back what it started, and
 * closes it after the test that started it, the last started first.
 */
export function closedAfterEach(): <T extends { close(): unknown }>(started: T) => T {
  const open: Array<{ close(): unknown }> = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });
  return (started) => {
    open.push(started);
    return started;
  };
}
