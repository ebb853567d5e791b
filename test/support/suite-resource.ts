/**
 * Something slow to start that the tests of a suite share (a daemon, a fake server): started in
 * `beforeAll`, stopped in `afterAll` of the suite the call stands in (the file, or a `describe`).
 *
 *   const d = useSuiteResource(() => startDaemon(), (d) => d.close());
 *   it("…", async () => { await d.client.request(…); });
 *
 * What it returns stands for the resource: every property read or written goes to the started
 * one, so tests use it as if they held the resource itself. Touching it outside the suite's
 * hooks and tests (e.g. destructuring it at the top of the file) throws.
 */
import { afterAll, beforeAll } from "vitest";

export function useSuiteResource<T extends object>(
  start: () => Promise<T>,
  stop: (resource: T) => Promise<void>,
  what = "the suite's resource",
): T {
  let current: T | undefined;
  beforeAll(async () => {
    current = await start();
  });
  afterAll(async () => {
    const resource = current;
    current = undefined;
    if (resource !== undefined) await stop(resource);
  });
  const started = (): T => {
    if (current === undefined) throw new Error(`${what} is only there while the suite runs (after its beforeAll, before its afterAll)`);
    return current;
  };
  return new Proxy({} as T, {
    get(_, key) {
      const resource = started();
      const value: unknown = Reflect.get(resource, key);
      return typeof value === "function" ? value.bind(resource) : value;
    },
    set: (_, key, value) => Reflect.set(started(), key, value),
    has: (_, key) => Reflect.has(started(), key),
  });
}
