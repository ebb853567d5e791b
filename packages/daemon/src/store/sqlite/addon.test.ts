import { describe, expect, it } from "vitest";
import { SqliteAddonError, sqliteAddonError } from "./addon.js";

const NODE_24 = { version: "v24.22.3", execPath: "/opt/node-24/bin/node" };

/** Node's error for an addon of another ABI, as `process.dlopen` throws it. */
function abiMismatch(addon: string, built: string, running: string): Error {
  const error = new Error(
    `The module '${addon}'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION ${built}. ` +
      `This version of Node.js requires\nNODE_MODULE_VERSION ${running}. Please try re-compiling or re-installing\n` +
      "the module (for instance, using `npm rebuild` or `npm install`).",
  );
  return Object.assign(error, { code: "ERR_DLOPEN_FAILED" });
}

describe("sqliteAddonError", () => {
  it("names both Nodes, clears the database, and rebuilds with pnpm in the clone that installed it", () => {
    const addon = "/home/me/base-context/node_modules/.pnpm/better-sqlite3@12.6.2/node_modules/better-sqlite3/build/Release/better_sqlite3.node";
    const problem = sqliteAddonError(abiMismatch(addon, "115", "137"), NODE_24)!;
    expect(problem).toBeInstanceOf(SqliteAddonError);
    expect(problem.message).toBe(
      "SQLite's driver cannot load: better-sqlite3's native addon was built for Node 20 (NODE_MODULE_VERSION 115), " +
        "but this is Node v24.22.3 (NODE_MODULE_VERSION 137). The session database is not affected.",
    );
    expect(problem.fixes).toEqual([
      'Rebuild the addon with this Node first on PATH (/opt/node-24/bin/node, v24.22.3): cd "/home/me/base-context" && npx --yes pnpm@10.34.9 rebuild -r better-sqlite3',
      "Or run base-context with the Node the addon was built for (Node 20).",
    ]);
    expect(problem.cause).toBeInstanceOf(Error);
    // Already read: the same error back, not wrapped twice.
    expect(sqliteAddonError(problem)).toBe(problem);
  });

  it("rebuilds with npm where npm installed it, and names an ABI it has no release for by number", () => {
    const addon = "/srv/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node";
    const problem = sqliteAddonError(abiMismatch(addon, "999", "137"), NODE_24)!;
    expect(problem.message).toContain("was built for NODE_MODULE_VERSION 999, but this is Node v24.22.3");
    expect(problem.fixes).toEqual([
      'Rebuild the addon with this Node first on PATH (/opt/node-24/bin/node, v24.22.3): cd "/srv/app" && npm rebuild better-sqlite3',
      "Or run base-context with the Node the addon was built for.",
    ]);
  });

  it("reads an addon that is missing or will not load as the driver's problem too", () => {
    const missing = new Error("Could not locate the bindings file. Tried:\n → /srv/app/node_modules/better-sqlite3/build/better_sqlite3.node");
    expect(sqliteAddonError(missing, NODE_24)?.message).toMatch(/^SQLite's driver cannot load: better-sqlite3's native addon is missing or unusable \(Could not locate/);
    const elf = Object.assign(new Error("/srv/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node: invalid ELF header"), {
      code: "ERR_DLOPEN_FAILED",
    });
    expect(sqliteAddonError(elf, NODE_24)?.fixes[0]).toContain("npm rebuild better-sqlite3");
  });

  it("leaves every other error alone: the database file's own, another addon's", () => {
    expect(sqliteAddonError(Object.assign(new Error("file is not a database"), { code: "SQLITE_NOTADB" }))).toBeUndefined();
    expect(sqliteAddonError(abiMismatch("/srv/app/node_modules/other/build/Release/other.node", "115", "137"))).toBeUndefined();
    expect(sqliteAddonError("a string")).toBeUndefined();
  });
});
