import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PluginHost } from "./host.js";
import { scaffoldPlugin } from "./scaffold.js";
import { compactEvent, settings } from "./test-support.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const disposers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

describe("scaffoldPlugin", () => {
  it.each(["ts", "js"] as const)("writes a %s plugin that the host loads and runs as is", async (language) => {
    const home = dirs.make();
    disposers.push(() => dirs.remove(home));
    const parentDir = join(home, "plugins");
    const result = await scaffoldPlugin({ name: "my-plugin", parentDir, language });
    expect(result.dir).toBe(join(parentDir, "my-plugin"));
    const pkg = JSON.parse(readFileSync(join(result.dir, "package.json"), "utf8"));
    expect(pkg.baseContext).toEqual({ apiVersion: 1, main: `index.${language}` });

    const host = new PluginHost({ home, watch: false });
    disposers.push(() => host.dispose());
    await host.start();
    const [info] = await host.list();
    expect(info).toMatchObject({ name: "my-plugin", status: "active", hooks: ["session_before_compact"] });
    expect(await host.runCompactHook(compactEvent(), { settings: settings() })).toEqual({ kind: "none", errors: [] });
  });

  it("refuses bad names and existing folders", async () => {
    const home = dirs.make();
    disposers.push(() => dirs.remove(home));
    await expect(scaffoldPlugin({ name: "../escape", parentDir: home })).rejects.toThrow("invalid plugin name");
    await scaffoldPlugin({ name: "once", parentDir: home });
    await expect(scaffoldPlugin({ name: "once", parentDir: home })).rejects.toThrow("already exists");
  });
});
