/**
 * The packages ship no export that only tests use: what exists for tests lives in test support
 * modules (`test-support.ts`, fixtures), which the build leaves out. The list below is every
 * export of the packages' shipped modules with the files that import it; an export fails when all
 * its importers are tests and its own module does not use it either (code that ships for tests).
 *
 * Left out: the entry points published for code outside this repository (the protocol for
 * clients, the plugin SDK and core's plugin API for plugins, core's index), whose users are not
 * here, and the plugin worker's SDK shim (plugins load it by the SDK's name). Types are left out
 * too: one named only in another export's signature is used without being imported.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { exportUsers, type ExportUse } from "../support/export-users.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const PACKAGES = {
  "@base-context/protocol": "packages/protocol/src/index.ts",
  "@base-context/core": "packages/core/src/index.ts",
  "@base-context/core/plugin-api": "packages/core/src/plugin-api.ts",
  "@base-context/daemon": "packages/daemon/src/index.ts",
  "@base-context/plugin-sdk": "packages/plugin-sdk/src/index.ts",
};
const PUBLISHED_FOR_OUTSIDE = new Set([...Object.values(PACKAGES).filter((entry) => !entry.startsWith("packages/daemon/")), "packages/daemon/src/plugins/worker/sdk-shim.ts"]);

const isTest = (file: string) => /\.test\.ts$|(^|\/)test-support\.ts$|(^|\/)fixtures(\.ts$|\/)|^test\//.test(file);
const isShipped = (file: string) => /^packages\/[^/]+\/src\//.test(file) && !isTest(file);

/** Whether `name` occurs in its own module besides its declaration (comments left out). */
function usedInOwnModule(use: ExportUse): boolean {
  const text = readFileSync(join(root, use.file), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  return (text.match(new RegExp(`(?<![\\w$.])${use.name.replace(/\$/g, "\\$")}(?![\\w$])`, "g")) ?? []).length > 1;
}

describe("exports of the shipped packages", () => {
  const uses = exportUsers(root, ["packages", "examples", "bench", "scripts", "test"], PACKAGES);

  it("finds the exports and their users (a module known to be imported has its importer listed)", () => {
    const shipped = uses.filter((use) => isShipped(use.file));
    expect(shipped.length).toBeGreaterThan(500);
    const openDaemon = uses.find((use) => use.file === "packages/daemon/src/sessions/database-file.ts" && use.name === "SCHEMA_VERSION");
    expect(openDaemon?.users).toContain("packages/daemon/src/cli/doctor-checks.ts");
  });

  it("lists no export used only by tests", () => {
    const testOnly = uses
      .filter((use) => isShipped(use.file) && !PUBLISHED_FOR_OUTSIDE.has(use.file) && use.kind === "value")
      .filter((use) => use.users.length > 0 && use.users.every(isTest) && !usedInOwnModule(use))
      .map((use) => `${use.file}: ${use.name} (used by ${use.users.join(", ")})`);
    expect(testOnly).toEqual([]);
  });
});
