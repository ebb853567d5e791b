/**
 * What the packages ship (docs/architecture.md#packages): each publishable package is packed with
 * `pnpm pack`, as a release would, and its tarball checked — no test code in any of them, the
 * workspace dependencies named by version — and the plugin SDK is installed alone, with npm, into
 * an empty folder: it must pull no native module (nor the daemon) and a plugin file importing it
 * must run there. Needs the packages built (`pnpm test` builds first) and npm's registry or cache
 * for the SDK's two registry dependencies (zod, vscode-jsonrpc; `--prefer-offline`).
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDirs } from "../support/temp-dir.js";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const PACKAGES = ["protocol", "core", "daemon", "plugin-sdk", "openai-agents"] as const;
type PackageName = (typeof PACKAGES)[number];

/** Paths of test code: test files, test support, fixtures. (The SDK's public `fixture.js` is none of them.) */
const TEST_PATH = /(\.test\.[cm]?[jt]s|(^|\/)test-support\.|(^|\/)test-helpers\.|(^|\/)fixtures(\/|\.))/;
/** An import of vitest in any module form. */
const VITEST_IMPORT = /(\bfrom\s*["']vitest["']|\bimport\s*\(\s*["']vitest["']|\brequire\s*\(\s*["']vitest["']|\bimport\s*["']vitest["'])/;

/**
 * The module a compiled file imports or re-exports (statements start a line in tsc's output), a
 * side-effect import, or a dynamic import of a literal.
 */
const MODULE_SPECIFIER =
  /^(?:import|export)\s*(?:\{[^}]*\}|\*(?:\s*as\s+\w+)?|\w+(?:\s*,\s*\{[^}]*\})?)\s*from\s*["']([^"']+)["']|^import\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']/gm;

/** The environment for pnpm and npm without what the running `pnpm test` set for its own scripts. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm|pnpm)_/i.test(name)));
}

/** pnpm, as the repository pins it: the one running `pnpm test` when there is one, else through npx. */
function pnpmCommand(): [string, string[]] {
  const execPath = process.env.npm_execpath;
  if (execPath !== undefined && /pnpm/.test(basename(execPath)) && existsSync(execPath)) return [process.execPath, [execPath]];
  return ["npx", ["--yes", "pnpm@10.34.9"]];
}

async function pack(name: PackageName, destination: string): Promise<string> {
  const folder = join(repoRoot, "packages", name);
  if (!existsSync(join(folder, "dist", "index.js"))) throw new Error(`packages/${name}/dist is missing: run \`pnpm build\` first`);
  const [command, prefix] = pnpmCommand();
  const { stdout } = await run(command, [...prefix, "pack", "--pack-destination", destination, "--json"], { cwd: folder, env: cleanEnv() });
  const { filename } = JSON.parse(stdout) as { filename: string };
  return filename;
}

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir: string, root = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path, root);
    return entry.isFile() ? [relative(root, path)] : [];
  });
}

describe("the packed packages", () => {
  const dirs = tempDirs();
  const tarballs = {} as Record<PackageName, string>;
  const unpacked = {} as Record<PackageName, string>;

  beforeAll(async () => {
    const destination = dirs.make("bc-pack-");
    for (const name of PACKAGES) {
      tarballs[name] = await pack(name, destination);
      unpacked[name] = dirs.make(`bc-unpacked-${name}-`);
      await run("tar", ["-xzf", tarballs[name], "-C", unpacked[name]]);
    }
  }, 120_000);
  afterAll(() => dirs.cleanup());

  it.each(PACKAGES)("%s ships no test code, fixtures or vitest import", (name) => {
    const root = join(unpacked[name], "package");
    const files = filesUnder(root);
    expect(files).toContain("package.json");
    expect(files.filter((file) => TEST_PATH.test(file))).toEqual([]);
    expect(files.filter((file) => file.endsWith(".tsbuildinfo"))).toEqual([]);
    const modules = files.filter((file) => /\.(?:[cm]?js|d\.[cm]?ts)$/.test(file));
    const importers = modules.filter((file) => VITEST_IMPORT.test(readFileSync(join(root, file), "utf8")));
    expect(importers).toEqual([]);
  });

  it("ships what runs: the daemon's CLI and entry points, the core's plugin API", () => {
    const daemon = filesUnder(join(unpacked.daemon, "package"));
    const entryPoints = ["bin/base-context.js", "dist/cli/main.js", "dist/index.js", "dist/plugins/worker/sdk-shim.js"];
    expect(daemon).toEqual(expect.arrayContaining(entryPoints));
    const core = filesUnder(join(unpacked.core, "package"));
    expect(core).toEqual(expect.arrayContaining(["dist/index.js", "dist/index.d.ts", "dist/plugin-api.js", "dist/plugin-api.d.ts"]));
  });

  it("the core imports nothing but itself and the protocol: no node: module, no database, network or watcher package", () => {
    const root = join(unpacked.core, "package");
    const imported = new Set<string>();
    for (const file of filesUnder(root).filter((path) => path.endsWith(".js"))) {
      const source = readFileSync(join(root, file), "utf8");
      // Static imports and re-exports (compiled output: one statement per line start), dynamic imports.
      for (const match of source.matchAll(MODULE_SPECIFIER)) imported.add(match[1] ?? match[2] ?? match[3]!);
      expect(source, file).not.toMatch(/\brequire\s*\(|\bimport\s*\(\s*[^"'\s]/);
    }
    expect(imported.size).toBeGreaterThan(10);
    const outside = [...imported].filter((specifier) => !specifier.startsWith("./") && !specifier.startsWith("../"));
    expect(outside.filter((specifier) => specifier !== "@base-context/protocol")).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(["@base-context/protocol"]);
  });

  it.each(PACKAGES)("%s names its workspace dependencies by version, and js-tiktoken only for development", (name) => {
    const manifest = JSON.parse(readFileSync(join(unpacked[name], "package", "package.json"), "utf8")) as {
      version: string;
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    for (const [dependency, range] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
      expect(range, `${dependency} of ${name}`).not.toMatch(/^workspace:/);
      if (dependency.startsWith("@base-context/")) expect(range, `${dependency} of ${name}`).toBe(manifest.version);
    }
    expect(Object.keys(manifest.dependencies ?? {})).not.toContain("js-tiktoken");
  });

  it("installs the plugin SDK alone into an empty folder: no native module, no daemon, and a plugin runs", async () => {
    const app = dirs.make("bc-sdk-alone-");
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "sdk-alone", private: true, type: "module" }));
    // The SDK's own dependencies are not on a registry yet: the tarballs stand in for them.
    const sdkAndSiblings = [tarballs["plugin-sdk"], tarballs.core, tarballs.protocol];
    const flags = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];
    await run("npm", ["install", ...flags, ...sdkAndSiblings], { cwd: app, env: cleanEnv() });

    const modules = join(app, "node_modules");
    const installed = filesUnder(modules);
    expect(installed.filter((file) => file.endsWith(".node") || basename(file) === "binding.gyp")).toEqual([]);
    type Lock = { packages: Record<string, { hasInstallScript?: boolean }> };
    const lock = JSON.parse(readFileSync(join(app, "package-lock.json"), "utf8")) as Lock;
    const packages = Object.keys(lock.packages).filter((path) => path !== "");
    expect(packages.filter((path) => lock.packages[path]!.hasInstallScript === true)).toEqual([]);
    for (const heavy of ["better-sqlite3", "@base-context/daemon", "openai", "chokidar"]) {
      expect(packages).not.toContain(`node_modules/${heavy}`);
    }
    expect(packages).toContain("node_modules/@base-context/plugin-sdk");

    writeFileSync(join(app, "plugin.mjs"), PLUGIN_SOURCE);
    const { stdout } = await run(process.execPath, ["plugin.mjs"], { cwd: app, env: cleanEnv() });
    expect(JSON.parse(stdout)).toEqual({
      kind: "result",
      firstKeptEntryId: "u2",
      summary: "Summarized:\n[User]: Fix the login bug\n\n[Assistant]: Fixed it",
    });
  }, 180_000);
});

/** A plugin as its author would write it, run through the SDK's harness on a small session. */
const PLUGIN_SOURCE = `import { convertToLlm, definePlugin, runHook, serializeConversation, sessionFixture }
  from "@base-context/plugin-sdk";

const plugin = definePlugin({
  name: "tiny",
  apiVersion: 1,
  hooks: {
    session_before_compact({ preparation }) {
      const summary = "Summarized:\\n" + serializeConversation(convertToLlm(preparation.messagesToSummarize));
      return { compaction: { summary, firstKeptEntryId: preparation.firstKeptEntryId, tokensBefore: preparation.tokensBefore } };
    },
  },
});

const session = sessionFixture()
  .user("Fix the login bug", { id: "u1" })
  .assistant("Fixed it")
  .user("Now add a test", { id: "u2" })
  .assistant("Done");
const result = await runHook(plugin, "session_before_compact", session.compactEvent());
const { kind, value } = result;
process.stdout.write(JSON.stringify({ kind, firstKeptEntryId: value?.firstKeptEntryId, summary: value?.summary }));
`;
