/**
 * The install's output stays quiet enough that a real problem stands out (docs/install.md):
 * every installed dependency with an install script is either allowed to build or named as ignored
 * (otherwise pnpm prints its "ignored build scripts" box), and the better-sqlite3 patch that silences
 * its two known compiler warnings targets the version that is actually installed.
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

  it("patches the installed better-sqlite3 to silence exactly its two known warnings", () => {
    const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      pnpm?: { patchedDependencies?: Record<string, string> };
    };
    const installed = installedManifests().find((m) => m.name === "better-sqlite3");
    expect(installed).toBeDefined();
    const patchPath = root.pnpm?.patchedDependencies?.[`better-sqlite3@${installed!.version}`];
    expect(patchPath).toBeDefined();
    const patch = readFileSync(join(ROOT, patchPath!), "utf8");
    expect(patch).toContain("-Wno-cast-function-type");
    expect(patch).toContain("-Wno-implicit-fallthrough");
    expect(patch).toContain("--loglevel=warn");
  });
});
