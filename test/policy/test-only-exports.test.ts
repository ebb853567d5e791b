/**
 * The packages ship no code that only tests use, nor code nobody uses: what exists for tests lives
 * in test support modules (`test-support.ts`, fixtures), which the build leaves out. The lists
 * below are every export of the packages' shipped modules with the files that import it, and
 * every public member of their classes with the files that read it. An export fails when all its
 * importers are tests, or it has none, and its own module does not use it either; a class member
 * fails when only tests read it.
 *
 * Left out: the entry points published for code outside this repository (the protocol for
 * clients, the plugin SDK and core's plugin API for plugins, core's index, the Agents SDK session),
 * whose users are not here, and the plugin worker's SDK shim (plugins load it by the SDK's name).
 * Types are left out too: one named only in another export's signature is used without being
 * imported. An index's re-export nobody imports through it is not counted as unused (its module's
 * users import the name from the module itself).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { exportUsers, memberUsers, withoutComments, type ExportUse } from "../support/export-users.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const PACKAGES = {
  "@base-context/protocol": "packages/protocol/src/index.ts",
  "@base-context/core": "packages/core/src/index.ts",
  "@base-context/core/plugin-api": "packages/core/src/plugin-api.ts",
  "@base-context/daemon": "packages/daemon/src/index.ts",
  "@base-context/daemon/views": "packages/daemon/src/views.ts",
  "@base-context/plugin-sdk": "packages/plugin-sdk/src/index.ts",
  "@base-context/openai-agents": "packages/openai-agents/src/index.ts",
};
const PUBLISHED_FOR_OUTSIDE = new Set([...Object.values(PACKAGES).filter((entry) => !entry.startsWith("packages/daemon/")), "packages/daemon/src/plugins/worker/sdk-shim.ts"]);

const isTest = (file: string) => /\.test\.ts$|(^|\/)test-support\.ts$|(^|\/)fixtures(\.ts$|\/)|^test\//.test(file);
const isShipped = (file: string) => /^packages\/[^/]+\/src\//.test(file) && !isTest(file);
/**
 * Exports reached by name rather than by an import: the daemon bundle's entry (cli/code-cache.ts
 * calls `serveMain` on the bundle's exports), the module hooks Node calls (`register`: the
 * plugins' loader hooks, the type-stripping hooks of workers run from the sources), and the
 * VS Code extension's `activate` and `deactivate`, which VS Code calls.
 */
const REACHED_BY_NAME = new Set([
  "packages/daemon/src/cli/serve-main.ts#serveMain",
  "packages/daemon/src/plugins/worker/loader-hooks.ts#initialize",
  "packages/daemon/src/plugins/worker/loader-hooks.ts#resolve",
  "packages/daemon/src/plugins/worker/loader-hooks.ts#load",
  "packages/daemon/src/workers/typescript-hooks.mjs#resolve",
  "packages/daemon/src/workers/typescript-hooks.mjs#load",
  "packages/vscode/src/extension.ts#activate",
  "packages/vscode/src/extension.ts#deactivate",
]);

/** Whether `name` occurs in its own module besides its declaration (comments left out). */
function usedInOwnModule(use: ExportUse): boolean {
  const text = withoutComments(use.file, readFileSync(join(root, use.file), "utf8"));
  // Not a member of something else (`x.name`); a spread (`...name`) is a use.
  return (text.match(new RegExp(`(?<![\\w$])(?<![^.]\\.)${use.name.replace(/\$/g, "\\$")}(?![\\w$])`, "g")) ?? []).length > 1;
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

  it("lists no export nobody uses", () => {
    const unused = uses
      .filter((use) => isShipped(use.file) && !PUBLISHED_FOR_OUTSIDE.has(use.file) && use.kind === "value" && !use.reexport)
      .filter((use) => use.users.length === 0 && !usedInOwnModule(use) && !REACHED_BY_NAME.has(`${use.file}#${use.name}`))
      .map((use) => `${use.file}: ${use.name}`);
    expect(unused).toEqual([]);
  });
});

/**
 * Members only tests read that this check found when it was written, each left to its folder's
 * owner to move behind test support. The list only shrinks: a member no longer read by tests alone
 * fails the check until its line is removed.
 */
const TEST_ONLY_MEMBERS_LEFT = new Set([
  "packages/daemon/src/settings/manager.ts: SettingsManager.whenWatching",
  "packages/protocol/src/transport/stream-transport.ts: StreamFrameReader.bufferedBytes",
]);

describe("members of the shipped packages' classes", () => {
  // The plugin SDK's harness (fixture.ts …) is published for plugin authors' tests: its users are not here.
  const shipped = (file: string) => isShipped(file) && !file.startsWith("packages/plugin-sdk/");
  const members = memberUsers(root, ["packages", "examples", "bench", "scripts", "test"], shipped);

  it("finds the members and their readers (a member the daemon calls has its caller listed)", () => {
    expect(members.length).toBeGreaterThan(300);
    const contextPath = members.find((member) => member.className === "SessionStore" && member.name === "contextPath");
    expect(contextPath?.users).toContain("packages/daemon/src/sessions/service.ts");
  });

  it("lists no member only tests read", () => {
    const testOnly = members.filter((member) => member.users.length > 0 && member.users.every(isTest));
    const named = (member: (typeof members)[number]) => `${member.file}: ${member.className}.${member.name}`;
    expect(testOnly.filter((member) => !TEST_ONLY_MEMBERS_LEFT.has(named(member))).map((m) => `${named(m)} (read by ${m.users.join(", ")})`)).toEqual([]);
    expect([...TEST_ONLY_MEMBERS_LEFT].filter((left) => !testOnly.some((member) => named(member) === left))).toEqual([]);
  });
});
