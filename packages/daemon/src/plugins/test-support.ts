/**
 * Helpers for the plugin host's tests: temporary homes and plugin folders, small hook events,
 * and waiting for something that happens on another thread.
 */
import type { CompactHookEvent, SessionEntry, Settings, TreeHookEvent } from "@base-context/protocol";
import { writeFileSync, mkdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { defaultSettings } from "../settings/index.js";
import { PluginHost, type PluginHostOptions } from "./host.js";

/** Cleanups a test file runs after each test, last first. */
export type Disposers = (() => Promise<void> | void)[];

/** A started host over `home` (not watching unless asked), disposed with the test's `disposers`. */
export async function startedHost(home: string, disposers: Disposers, options: Omit<PluginHostOptions, "home"> = {}): Promise<PluginHost> {
  const host = new PluginHost({ home, watch: false, ...options });
  disposers.push(() => host.dispose());
  await host.start();
  return host;
}

/** Writes a plugin folder: package.json (with `baseContext`) plus the given files. */
export function writePlugin(
  root: string,
  name: string,
  files: Record<string, string>,
  options: { main?: string; apiVersion?: number; version?: string } = {},
): string {
  const dir = join(root, name);
  const main = options.main ?? Object.keys(files)[0]!;
  writeFiles(dir, {
    "package.json": JSON.stringify({
      name,
      version: options.version ?? "1.0.0",
      type: "module",
      baseContext: { apiVersion: options.apiVersion ?? 1, main },
    }),
    ...files,
  });
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
}

/** How editors save: write a temporary file next to the target, then rename it over the target. */
export function atomicSave(path: string, text: string): void {
  const temporary = join(dirname(path), `.${Date.now()}.tmp`);
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

/** A plain-JS plugin module exporting the given hooks source (an object literal body). */
export function pluginModule(hooksBody: string, preamble = ""): string {
  return `${preamble}\nexport default { name: "test", apiVersion: 1, hooks: { ${hooksBody} } };\n`;
}

export function settings(overrides: Partial<Settings["plugins"]> = {}): Settings {
  const value = defaultSettings();
  value.plugins = { ...value.plugins, hookTimeoutMs: 5_000, ...overrides };
  return value;
}

const at = "2024-01-01T00:00:00.000Z";

function user(id: string, parentId: string | null, text: string): SessionEntry {
  return { type: "message", id, parentId, timestamp: at, message: { role: "user", content: text, timestamp: 1 } };
}

function assistant(id: string, parentId: string, text: string): SessionEntry {
  return { type: "message", id, parentId, timestamp: at, message: { role: "assistant", content: [{ type: "text", text }], timestamp: 2 } };
}

/** u1 a1 (summarized) | u2 a2 (kept, first kept: u2). */
export function compactEvent(): CompactHookEvent {
  const branchEntries = [user("u1", null, "hello"), assistant("a1", "u1", "hi"), user("u2", "a1", "more"), assistant("a2", "u2", "sure")];
  const message = (entry: SessionEntry) => (entry.type === "message" ? entry.message : undefined)!;
  return {
    preparation: {
      leafId: "a2",
      firstKeptEntryId: "u2",
      messagesToSummarize: [message(branchEntries[0]!), message(branchEntries[1]!)],
      summarizeEntryIds: ["u1", "a1"],
      turnPrefixMessages: [],
      turnPrefixEntryIds: [],
      isSplitTurn: false,
      tokensBefore: 100,
      fileOps: { readFiles: [], modifiedFiles: [] },
      settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
    },
    branchEntries,
  };
}

export function treeEvent(): TreeHookEvent {
  return {
    preparation: {
      targetId: "u1",
      oldLeafId: "a2",
      commonAncestorId: "u1",
      entriesToSummarize: compactEvent().branchEntries.slice(1),
      userWantsSummary: true,
    },
  };
}

/** Polls until `check` returns a value other than undefined (for effects on other threads). */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 5_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
