#!/usr/bin/env node
/**
 * Packages the extension as a .vsix with @vscode/vsce (pinned): bundles it (build.mjs), then runs
 * `vsce package`. vsce is not a dependency of the workspace (it brings some two hundred packages
 * that only this step needs): it is installed once into node_modules/.cache/base-context/, as the
 * suite's other tools are. Prints the .vsix's path.
 *
 *   node packages/vscode/scripts/package-vsix.mjs [--out <file.vsix>]
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

export const VSCE_VERSION = "3.9.2";

const extensionRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = join(extensionRoot, "..", "..");
const cache = join(repoRoot, "node_modules", ".cache", "base-context");

/** Installs vsce into the cache unless it is there; returns its command-line script. */
export function ensureVsce() {
  const dir = join(cache, `vsce-${VSCE_VERSION}`);
  const script = join(dir, "node_modules", "@vscode", "vsce", "vsce");
  if (existsSync(script)) return script;
  mkdirSync(cache, { recursive: true });
  // Installed beside, then renamed into place: a run stopped halfway leaves no half-installed tool.
  const staging = mkdtempSync(join(cache, `staging-vsce-${VSCE_VERSION}-`));
  try {
    execFileSync(
      "npm",
      ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", staging, `@vscode/vsce@${VSCE_VERSION}`],
      // Without the npm_config_* a package manager running this script set: npm would read them as its own settings.
      { stdio: ["ignore", "ignore", "inherit"], timeout: 600_000, env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm|pnpm)_/i.test(key))) },
    );
    try {
      renameSync(staging, dir);
    } catch (error) {
      if (!existsSync(script)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return script;
}

/** Builds and packages the extension; returns the .vsix's path. */
export function packageVsix(out) {
  const { version } = JSON.parse(readFileSync(join(extensionRoot, "package.json"), "utf8"));
  const target = resolve(out ?? join(extensionRoot, "dist", `base-context-${version}.vsix`));
  const vsce = ensureVsce();
  execFileSync(process.execPath, [join(extensionRoot, "scripts", "build.mjs")], { stdio: "inherit" });
  mkdirSync(dirname(target), { recursive: true });
  execFileSync(
    process.execPath,
    // The bundle holds every dependency; the repository has no licence file or public URL yet.
    [vsce, "package", "--no-dependencies", "--skip-license", "--allow-missing-repository", "--no-rewrite-relative-links", "--out", target],
    { cwd: extensionRoot, stdio: ["ignore", "ignore", "inherit"] },
  );
  return target;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  console.log(packageVsix(values.out));
}
