/**
 * The install's output stays quiet enough that a real problem stands out (docs/install.md):
 * every installed dependency with an install script is either allowed to build or named as ignored
 * (otherwise pnpm prints its "ignored build scripts" box).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const STORE = join(ROOT, "node_modules", ".pnpm");
const BUILD_SCRIPTS = ["preinstall", "install", "postinstall"] as const;

interface Manifest {
  name: string;
  version: string;
  scripts?: Record<string, string>;
}

/** A `key:` list of plain or quoted names in pnpm-workspace.yaml. */
function workspaceList(key: string): string[] {
  const text = readFileSync(join(ROOT, "pnpm-workspace.yaml"), "utf8");
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.trim() === `${key}:`);
  if (start < 0) return [];
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const item = /^\s+-\s+"?([^"\s]+)"?\s*$/.exec(line);
    if (!item) break;
    names.push(item[1]!);
  }
  return names;
}

/** Every package pnpm installed (one manifest per folder of node_modules/.pnpm). */
function installedManifests(): Manifest[] {
  const manifests: Manifest[] = [];
  for (const folder of readdirSync(STORE)) {
    const modules = join(STORE, folder, "node_modules");
    if (!existsSync(modules)) continue;
    for (const entry of readdirSync(modules)) {
      const dirs = entry.startsWith("@") ? readdirSync(join(modules, entry)).map((name) => join(entry, name)) : [entry];
      for (const dir of dirs) {
        const path = join(modules, dir, "package.json");
        if (!existsSync(path)) continue;
        const manifest = JSON.parse(readFileSync(path, "utf8")) as Manifest;
        // Each folder also links its own dependencies; only the package the folder is named after counts.
        if (folder.startsWith(`${manifest.name.replace("/", "+")}@${manifest.version}`)) manifests.push(manifest);
      }
    }
  }
  return manifests;
}

describe("install configuration", () => {
  it("names every dependency with an install script as built or ignored", () => {
    const decided = new Set([...workspaceList("onlyBuiltDependencies"), ...workspaceList("ignoredBuiltDependencies")]);
    const withScripts = installedManifests().filter((m) => BUILD_SCRIPTS.some((script) => m.scripts?.[script]));
    expect(withScripts.map((m) => m.name)).toContain("better-sqlite3");
    const undecided = [...new Set(withScripts.map((m) => m.name))].filter((name) => !decided.has(name));
    expect(undecided).toEqual([]);
  });
});
