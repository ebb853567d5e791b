/**
 * Finding plugins on disk: every folder of a plugins root is a plugin, described by its
 * package.json (`baseContext: { apiVersion, main? }`, falling back to the package's `main`).
 * A folder that is not a valid plugin is still listed (status "error") so its author sees why.
 */
import { SUPPORTED_PLUGIN_API_VERSIONS } from "@base-context/protocol";
import { readdir, readFile, stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { baseContextHome, projectConfigDir } from "../paths.js";

export interface PluginManifest {
  version: string;
  apiVersion: number;
  /** Absolute path of the entry module. */
  entryPath: string;
  entryUrl: string;
}

export type ManifestRead = { ok: true; manifest: PluginManifest } | { ok: false; message: string };

/** Entries Node can load directly, plus TypeScript (type-stripped by the worker's loader hooks). */
const ENTRY_EXTENSIONS = new Set([".js", ".mjs", ".cjs", ".ts", ".mts"]);
/** Tried in order when package.json names no entry. */
const DEFAULT_ENTRIES = ["index.ts", "index.mts", "index.mjs", "index.js"];

const PackageJson = z
  .object({
    version: z.string().optional(),
    main: z.string().optional(),
    baseContext: z
      .object({ apiVersion: z.number().int(), main: z.string().min(1).optional() })
      .loose()
      .optional(),
  })
  .loose();

export function globalPluginsRoot(home: string = baseContextHome()): string {
  return join(home, "plugins");
}

export function projectPluginsRoot(projectDir: string): string {
  return join(projectConfigDir(projectDir), "plugins");
}

/** Plugin folder names under a root ([] when the root does not exist). */
export async function listPluginFolders(root: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    if (entry.isDirectory() || (entry.isSymbolicLink() && (await isDirectory(join(root, entry.name))))) names.push(entry.name);
  }
  return names.sort();
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

export async function readManifest(dir: string): Promise<ManifestRead> {
  let text: string;
  try {
    text = await readFile(join(dir, "package.json"), "utf8");
  } catch {
    return { ok: false, message: "the plugin folder has no package.json" };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `package.json is not valid JSON: ${(error as Error).message}` };
  }
  const parsed = PackageJson.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      message: `package.json: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`,
    };
  const pkg = parsed.data;
  if (pkg.baseContext === undefined) {
    return { ok: false, message: 'package.json has no "baseContext" field (e.g. "baseContext": { "apiVersion": 1, "main": "index.ts" })' };
  }
  const { apiVersion } = pkg.baseContext;
  if (!SUPPORTED_PLUGIN_API_VERSIONS.includes(apiVersion)) {
    return {
      ok: false,
      message: `baseContext.apiVersion ${apiVersion} is not supported (supported: ${SUPPORTED_PLUGIN_API_VERSIONS.join(", ")})`,
    };
  }

  const named = pkg.baseContext.main ?? pkg.main;
  let entryPath: string | undefined;
  if (named !== undefined) {
    entryPath = resolve(dir, named);
    if (!(await isFile(entryPath))) return { ok: false, message: `the entry "${named}" does not exist` };
  } else {
    for (const candidate of DEFAULT_ENTRIES) {
      if (await isFile(join(dir, candidate))) {
        entryPath = join(dir, candidate);
        break;
      }
    }
    if (entryPath === undefined)
      return {
        ok: false,
        message: `package.json names no entry ("baseContext.main" or "main") and there is no ${DEFAULT_ENTRIES.join(" / ")}`,
      };
  }
  if (!ENTRY_EXTENSIONS.has(extname(entryPath))) {
    return { ok: false, message: `the entry must be a ${[...ENTRY_EXTENSIONS].join(", ")} file` };
  }
  return { ok: true, manifest: { version: pkg.version ?? "0.0.0", apiVersion, entryPath, entryUrl: pathToFileURL(entryPath).href } };
}

/** The plugin folder name a changed path belongs to, or null for the root itself (or above it). */
export function pluginNameOf(root: string, changedPath: string): string | null {
  const prefix = root.endsWith(sep) ? root : root + sep;
  if (!changedPath.startsWith(prefix)) return null;
  const name = changedPath.slice(prefix.length).split(sep)[0];
  return name === undefined || name.length === 0 ? null : name;
}
