import { describe, expect, it } from "vitest";
import { isEditorTempFile } from "./watcher.js";

describe("isEditorTempFile", () => {
  it("recognises the files editors and atomic writers leave beside the one being saved", () => {
    for (const name of [".#index.ts", "#index.ts#", "index.ts~", ".index.ts.swp", ".index.ts.swx", "4913", "index.ts.tmp", ".index.ts.tmp", "index.ts.tmp.4711", "index.ts___jb_tmp___", "index.ts___jb_old___"]) {
      expect(isEditorTempFile(name), name).toBe(true);
    }
  });

  it("leaves plugin files alone, including names that merely look alike", () => {
    for (const name of ["index.ts", "index.js", "plugin.json", "package.json", "tmp.ts", "template.ts", "4913.ts", "notes#1.md", "swap.ts"]) {
      expect(isEditorTempFile(name), name).toBe(false);
    }
  });
});
