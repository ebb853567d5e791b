import { execFileSync } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { VERSION } from "../version.js";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

describe("the base-context bin", () => {
  it("is a committed file outside dist (linkable before the build), executable, that runs the CLI", () => {
    const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { bin: Record<string, string>; files: string[] };
    const bin = join(packageDir, manifest.bin["base-context"]!);
    expect(relative(packageDir, bin).split("/")[0]).toBe("bin");
    expect(manifest.files).toContain("bin");
    accessSync(bin, constants.X_OK);
    expect(readFileSync(bin, "utf8")).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect(execFileSync(bin, ["--version"], { encoding: "utf8" })).toBe(`${VERSION}\n`);
  });
});
