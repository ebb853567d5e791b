import { join, sep } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CrashBreaker } from "./crash-breaker.js";
import { pluginNameOf, readManifest } from "./discovery.js";
import { orderPlugins } from "./order.js";
import { writeFiles } from "./test-support.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const disposers: (() => void)[] = [];
afterEach(() => {
  for (const dispose of disposers.splice(0)) dispose();
});

describe("orderPlugins", () => {
  const plugin = (id: string, name: string) => ({ id, name });
  const plugins = [plugin("global:b", "b"), plugin("project:a@/p", "a"), plugin("global:c", "c"), plugin("global:a", "a")];

  it("orders by name, then id (global before project for the same name)", () => {
    expect(orderPlugins(plugins, []).map((p) => p.id)).toEqual(["global:a", "project:a@/p", "global:b", "global:c"]);
  });

  it("puts plugins named in plugins.order first, by name or by id, in that order", () => {
    expect(orderPlugins(plugins, ["c", "project:a@/p"]).map((p) => p.id)).toEqual(["global:c", "project:a@/p", "global:a", "global:b"]);
  });
});

describe("CrashBreaker", () => {
  it("trips at the limit within the window and forgets older deaths", () => {
    let now = 0;
    const breaker = new CrashBreaker(3, 1_000, () => now);
    expect(breaker.record()).toBe(false);
    now = 600;
    expect(breaker.record()).toBe(false);
    now = 1_100; // the first death has left the window
    expect(breaker.record()).toBe(false);
    now = 1_200;
    expect(breaker.record()).toBe(true);
    breaker.reset();
    expect(breaker.record()).toBe(false);
  });
});

describe("readManifest", () => {
  function folder(files: Record<string, string>): string {
    const tmp = dirs.make();
    disposers.push(() => dirs.remove(tmp));
    writeFiles(tmp, files);
    return tmp;
  }

  it("reads apiVersion and main from the baseContext field", async () => {
    const dir = folder({
      "package.json": JSON.stringify({ version: "2.1.0", baseContext: { apiVersion: 1, main: "src/plugin.ts" } }),
      "src/plugin.ts": "",
    });
    const read = await readManifest(dir);
    expect(read).toEqual({
      ok: true,
      manifest: {
        version: "2.1.0",
        apiVersion: 1,
        entryPath: join(dir, "src", "plugin.ts"),
        entryUrl: expect.stringMatching(/^file:.*plugin\.ts$/),
      },
    });
  });

  it("falls back to the package's main, then to index.ts / index.mjs / index.js", async () => {
    const withMain = folder({ "package.json": JSON.stringify({ main: "lib.mjs", baseContext: { apiVersion: 1 } }), "lib.mjs": "" });
    const read = await readManifest(withMain);
    expect(read.ok && read.manifest.entryPath).toBe(join(withMain, "lib.mjs"));
    const withIndex = folder({ "package.json": JSON.stringify({ baseContext: { apiVersion: 1 } }), "index.js": "" });
    const indexRead = await readManifest(withIndex);
    expect(indexRead.ok && [indexRead.manifest.entryPath, indexRead.manifest.version]).toEqual([join(withIndex, "index.js"), "0.0.0"]);
  });

  it("explains what is wrong", async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, "no package.json"],
      [{ "package.json": "{ nope" }, "not valid JSON"],
      [{ "package.json": JSON.stringify({ main: "x.js" }), "x.js": "" }, 'no "baseContext" field'],
      [{ "package.json": JSON.stringify({ baseContext: { apiVersion: 2 } }) }, "apiVersion 2 is not supported"],
      [{ "package.json": JSON.stringify({ baseContext: { apiVersion: 1, main: "missing.js" } }) }, 'the entry "missing.js" does not exist'],
      [{ "package.json": JSON.stringify({ baseContext: { apiVersion: 1 } }) }, "names no entry"],
      [{ "package.json": JSON.stringify({ baseContext: { apiVersion: 1, main: "x.json" } }), "x.json": "{}" }, "the entry must be"],
    ];
    for (const [files, message] of cases) {
      const read = await readManifest(folder(files));
      expect(read.ok === false && read.message).toContain(message);
    }
  });
});

describe("pluginNameOf", () => {
  it("maps a changed path to its plugin folder, and the root (or above) to null", () => {
    const root = `${sep}home${sep}plugins`;
    expect(pluginNameOf(root, join(root, "a", "src", "x.ts"))).toBe("a");
    expect(pluginNameOf(root, join(root, "a"))).toBe("a");
    expect(pluginNameOf(root, root)).toBeNull();
    expect(pluginNameOf(root, `${sep}home`)).toBeNull();
  });
});
