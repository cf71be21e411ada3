// One running thing (a simulator, a stack, a receiver) shared by the tests of a file or a describe block.
import { afterAll, beforeAll } from 'vitest';

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
