/**
 * A settings file is first read as the daemon starts, with its first requests waiting for it; the
 * watch on it (a process's first `fs.watch` costs milliseconds of CPU) starts once the code that
 * read it is done, and nothing written meanwhile is missed (docs/architecture.md#start-path-and-bundles).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import { waitFor } from "../../../../test/support/wait.js";
import { SettingsManager, type SettingsChangeEvent } from "./manager.js";

const started: string[] = [];
vi.mock("./watch.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("./watch.js")>();
  return {
    ...real,
    watchSettingsFile: (...args: Parameters<typeof real.watchSettingsFile>) => {
      started.push(args[0]);
      return real.watchSettingsFile(...args);
    },
  };
});

const dirs = tempDirs();
let manager: SettingsManager | undefined;
afterEach(async () => {
  await manager?.dispose();
  manager = undefined;
  started.length = 0;
  dirs.cleanup();
});

describe("SettingsManager's watches", () => {
  it("start after the code that first read the file, and still see what was written in between", async () => {
    const home = join(dirs.make(), ".base-context");
    mkdirSync(home, { recursive: true });
    const file = join(home, "settings.json");
    writeFileSync(file, JSON.stringify({ context: { mode: "on" } }));
    manager = new SettingsManager({ env: { BASE_CONTEXT_HOME: home }, debounceMs: 10 });
    const events: SettingsChangeEvent[] = [];
    manager.onDidChange((event) => events.push(event));

    expect(manager.get().settings.context.mode).toBe("on");
    expect(started).toEqual([]); // not on the path of the read
    writeFileSync(file, JSON.stringify({ context: { mode: "off" } })); // before the watch exists

    await manager.whenWatching();
    expect(started).toEqual([file]);
    await waitFor(() => events.length > 0);
    expect(manager.get().settings.context.mode).toBe("off");
  });

  it("never start once the manager is disposed", async () => {
    const home = join(dirs.make(), ".base-context");
    const disposed = new SettingsManager({ env: { BASE_CONTEXT_HOME: home } });
    disposed.get();
    await disposed.dispose();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([]);
  });
});

describe("SettingsManager's watches, given when to start", () => {
  it("start once `watchFrom` resolves, and then read what was written before", async () => {
    const home = join(dirs.make(), ".base-context");
    mkdirSync(home, { recursive: true });
    const file = join(home, "settings.json");
    writeFileSync(file, JSON.stringify({ context: { mode: "on" } }));
    let release!: () => void;
    const watchFrom = new Promise<void>((resolve) => (release = resolve));
    manager = new SettingsManager({ env: { BASE_CONTEXT_HOME: home }, debounceMs: 10, watchFrom });
    const events: SettingsChangeEvent[] = [];
    manager.onDidChange((event) => events.push(event));
    expect(manager.get().settings.context.mode).toBe("on");
    writeFileSync(file, JSON.stringify({ context: { mode: "off" } }));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(started).toEqual([]);
    expect(events).toEqual([]);

    release();
    await manager.whenWatching();
    expect(started).toEqual([file]);
    await waitFor(() => events.length > 0);
    expect(manager.get().settings.context.mode).toBe("off");
  });
});
