import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "./test-support.js";
import { isEditorTempFile, watchPluginRoot, type RootWatch } from "./watcher.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("isEditorTempFile", () => {
  it("recognises the files editors and atomic writers leave beside the one being saved", () => {
    for (const name of [
      ".#index.ts",
      "#index.ts#",
      "index.ts~",
      ".index.ts.swp",
      ".index.ts.swx",
      "4913",
      "index.ts.tmp",
      ".index.ts.tmp",
      "index.ts.tmp.4711",
      "index.ts___jb_tmp___",
      "index.ts___jb_old___",
    ]) {
      expect(isEditorTempFile(name), name).toBe(true);
    }
  });

  it("leaves plugin files alone, including names that merely look alike", () => {
    for (const name of [
      "index.ts",
      "index.js",
      "plugin.json",
      "package.json",
      "tmp.ts",
      "template.ts",
      "4913.ts",
      "notes#1.md",
      "swap.ts",
    ]) {
      expect(isEditorTempFile(name), name).toBe(false);
    }
  });
});

describe("watchPluginRoot", () => {
  it("reports a second save of the same file made right after the first one was reported", async () => {
    const home = dirs.make();
    cleanups.push(() => dirs.remove(home));
    const root = join(home, "plugins");
    const file = join(root, "live", "index.js");
    mkdirSync(join(root, "live"), { recursive: true });
    writeFileSync(file, "first");
    let changes = 0;
    const watch: RootWatch = await watchPluginRoot(root, home, (name) => {
      if (name === "live") changes++;
    });
    cleanups.push(() => watch.close());
    const save = (text: string) => {
      writeFileSync(`${file}.tmp`, text);
      renameSync(`${file}.tmp`, file);
    };

    save("second");
    await eventually(() => (changes >= 1 ? true : undefined), 5_000, "the first save to be reported");
    // Saved again at once: a watcher that drops changes of a path reported a moment ago (chokidar
    // throttles "change" for 50 ms) would never report this one, and the plugin would stay stale.
    const reported = changes;
    save("third");
    await eventually(() => (changes > reported ? true : undefined), 5_000, "the second save to be reported");
    expect(changes).toBeGreaterThan(reported);
  });
});
