/**
 * better-sqlite3's native addon failing to load into the running Node: built for another Node ABI
 * (installed under one Node, run under another, or Node upgraded since), or not built at all.
 * Node's own error names the addon's file and `NODE_MODULE_VERSION`s only, and reached users as a
 * problem with the database file, with the advice to move it away: the file is fine, the addon is
 * not. Driver-free (it never loads the addon itself), so the CLI can read it before the driver.
 */
import { sep } from "node:path";

/** Node's ABI number (`process.versions.modules`) → its release line, for the releases base-context may meet. */
const NODE_OF_ABI: Readonly<Record<string, string>> = { "108": "18", "115": "20", "127": "22", "137": "24" };

export class SqliteAddonError extends Error {
  override readonly name = "SqliteAddonError";
  constructor(
    message: string,
    /** What to do about it, one step a line. */
    readonly fixes: readonly string[],
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** The addon problem `error` (thrown by opening a database) is, else undefined. */
export function sqliteAddonError(error: unknown, running: NodeRelease = currentNode()): SqliteAddonError | undefined {
  if (error instanceof SqliteAddonError) return error;
  if (!(error instanceof Error)) return undefined;
  const { message } = error;
  // The addon's file, as Node's error (or the loader's list of places tried) names it.
  const addon = /([^\s'"]*better_sqlite3\.node)/.exec(message)?.[1];
  const abi = /NODE_MODULE_VERSION (\d+)\.\s+This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(message);
  if (abi && addon !== undefined) {
    const builtFor = NODE_OF_ABI[abi[1]!];
    const built = builtFor === undefined ? `NODE_MODULE_VERSION ${abi[1]}` : `Node ${builtFor} (NODE_MODULE_VERSION ${abi[1]})`;
    return new SqliteAddonError(
      `SQLite's driver cannot load: better-sqlite3's native addon was built for ${built}, but this is Node ${running.version} ` +
        `(NODE_MODULE_VERSION ${abi[2]}). The session database is not affected.`,
      [
        ...rebuildSteps(addon, running),
        `Or run base-context with the Node the addon was built for${builtFor === undefined ? "" : ` (Node ${builtFor})`}.`,
      ],
      { cause: error },
    );
  }
  const code = (error as { code?: unknown }).code;
  if (addon !== undefined && (code === "ERR_DLOPEN_FAILED" || message.startsWith("Could not locate the bindings file"))) {
    return new SqliteAddonError(
      `SQLite's driver cannot load: better-sqlite3's native addon is missing or unusable (${firstLine(message)}). ` +
        "The session database is not affected.",
      rebuildSteps(addon, running),
      { cause: error },
    );
  }
  return undefined;
}

export interface NodeRelease {
  /** `process.version`. */
  version: string;
  /** `process.execPath`: the Node to put first on PATH when rebuilding. */
  execPath: string;
}

function currentNode(): NodeRelease {
  return { version: process.version, execPath: process.execPath };
}

/**
 * The rebuild, in the folder that installed base-context: the clone (pnpm, which keeps packages
 * under node_modules/.pnpm) or the project whose npm install put it there. The build runs under
 * the first `node` on PATH, which must be the one that runs base-context.
 */
function rebuildSteps(addon: string, running: NodeRelease): string[] {
  const marker = `${sep}node_modules${sep}`;
  const at = addon.indexOf(marker);
  const root = at > 0 ? addon.slice(0, at) : undefined;
  const pnpm = addon.includes(`${marker}.pnpm${sep}`);
  const command = pnpm ? "npx --yes pnpm@10.34.9 rebuild -r better-sqlite3" : "npm rebuild better-sqlite3";
  const where = root === undefined ? "" : `cd "${root}" && `;
  return [`Rebuild the addon with this Node first on PATH (${running.execPath}, ${running.version}): ${where}${command}`];
}

function firstLine(text: string): string {
  return text.split("\n")[0]!.trim();
}
