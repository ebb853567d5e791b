/**
 * The import rules (.dependency-cruiser.cjs) are rules, not a snapshot of today's tree: each one
 * fails on a small file tree laid out like the repository that breaks it, and the imports the
 * layers allow pass. The real tree is checked by `pnpm lint` (part of `pnpm test`).
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDirs } from "../support/temp-dir.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const DEPCRUISE = join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");

/** Where the config says the core is (the core package, "packages/core/src/"). */
const CORE_DIR = (() => {
  const config = createRequire(import.meta.url)(join(ROOT, ".dependency-cruiser.cjs")) as {
    forbidden: { name: string; from: { path?: string } }[];
  };
  const rule = config.forbidden.find((candidate) => candidate.name === "core-imports-no-io-module");
  return rule!.from.path!.replace(/^\^/, "");
})();
/** An import of the daemon's sessions/ from the core, whichever folder the core is in. */
const CORE_TO_SESSIONS = `${posix.relative(CORE_DIR, "packages/daemon/src/sessions")}/service.js`;

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** The files of the fixture tree: path → text. */
const FILES: Record<string, string> = {
  // A cycle.
  "packages/daemon/src/tree/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
  "packages/daemon/src/tree/b.ts": 'import type { a } from "./a.js";\nexport const b = 1;\nexport type A = typeof a;\n',
  // The core reaching for I/O: Node modules, packages, the daemon's layers.
  [`${CORE_DIR}reads-files.ts`]: 'import { readFileSync } from "node:fs";\nexport const read = readFileSync;\n',
  [`${CORE_DIR}spawns.ts`]: 'import { spawn } from "child_process";\nexport const run = spawn;\n',
  [`${CORE_DIR}opens-database.ts`]: 'import Database from "better-sqlite3";\nexport const open = Database;\n',
  [`${CORE_DIR}uses-sessions.ts`]: `import type { Session } from "${CORE_TO_SESSIONS}";\nexport type S = Session;\n`,
  // …and what it may use: itself, pure Node modules.
  [`${CORE_DIR}pure.ts`]: 'import { a } from "./text.js";\nimport { join } from "node:path";\nexport const p = [a, join];\n',
  [`${CORE_DIR}text.ts`]: "export const a = 1;\n",
  // server/ imported from outside cli/ …
  "packages/daemon/src/server/server.ts": "export const serve = 1;\n",
  "packages/daemon/src/sessions/serves.ts": 'import { serve } from "../server/server.js";\nexport const s = serve;\n',
  // … and from cli/ and tests, as allowed.
  "packages/daemon/src/cli/serve.ts": 'import { serve } from "../server/server.js";\nexport const s = serve;\n',
  "packages/daemon/src/server/server.test.ts": 'import { serve } from "./server.js";\nexport const s = serve;\n',
  // The store from around sessions/ …
  "packages/daemon/src/store/session-store.ts": "export class SessionStore {}\n",
  "packages/daemon/src/compaction/commit.ts": 'import { SessionStore } from "../store/session-store.js";\nexport const c = SessionStore;\n',
  // … and through it, from the wiring and from test support, as allowed.
  "packages/daemon/src/sessions/service.ts":
    'import { SessionStore } from "../store/session-store.js";\nexport interface Session { id: string }\nexport const x = SessionStore;\n',
  "packages/daemon/src/daemon.ts": 'import { SessionStore } from "./store/session-store.js";\nexport const d = SessionStore;\n',
  "packages/daemon/src/tree/test-support.ts": 'import { SessionStore } from "../store/session-store.js";\nexport const t = SessionStore;\n',
  // The plugin SDK reaching into the daemon, and its allowed use of the core.
  "packages/plugin-sdk/src/uses-daemon.ts": 'import { d } from "../../daemon/src/daemon.js";\nexport const u = d;\n',
  "packages/plugin-sdk/src/uses-core.ts": `import { a } from "../../../${CORE_DIR}text.js";\nexport const u = a;\n`,
  // An import nobody can resolve.
  "packages/daemon/src/plugins/typo.ts": 'import { nothing } from "./no-such-file.js";\nexport const n = nothing;\n',
};

const dirs = tempDirs();
let violations: Violation[];

beforeAll(() => {
  const root = dirs.make("bc-import-rules-");
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  copyFileSync(join(ROOT, "tsconfig.base.json"), join(root, "tsconfig.base.json"));
  // The daemon's dependencies (better-sqlite3 …), where the fixture's imports find them.
  symlinkSync(join(ROOT, "packages/daemon/node_modules"), join(root, "node_modules"), "dir");
  let output: string;
  try {
    output = execFileSync(
      process.execPath,
      [DEPCRUISE, "--config", join(ROOT, ".dependency-cruiser.cjs"), "--output-type", "json", "packages"],
      { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
  } catch (error) {
    // Exit status 1+ with violations: the report is on stdout all the same.
    output = (error as { stdout: string }).stdout;
  }
  violations = (JSON.parse(output) as { summary: { violations: Violation[] } }).summary.violations;
}, 60_000);

afterAll(() => dirs.cleanup());

const D = "packages/daemon/src/";
const short = (path: string) => path.replace(D, "").replace(/^.*node_modules\/([^/]+)\/.*$/, "$1");
const core = (name: string) => short(`${CORE_DIR}${name}`);
function broken(rule: string): string[] {
  return violations
    .filter((violation) => violation.rule.name === rule)
    .map((violation) => `${short(violation.from)} → ${short(violation.to)}`)
    .sort();
}

describe("the import rules", () => {
  it("refuse an import cycle, type-only imports included", () => {
    expect(broken("no-circular")).toEqual(["tree/a.ts → tree/b.ts"]);
  });

  it("refuse an I/O module in the core: Node's, with or without node:, and packages such as better-sqlite3", () => {
    expect(broken("core-imports-no-io-module")).toEqual([`${core("reads-files.ts")} → fs`, `${core("spawns.ts")} → child_process`]);
    expect(broken("core-imports-no-io-package")).toEqual([`${core("opens-database.ts")} → better-sqlite3`]);
  });

  it("refuse an import of the daemon's layers from the core", () => {
    expect(broken("core-imports-nothing-of-the-daemon")).toEqual([`${core("uses-sessions.ts")} → sessions/service.ts`]);
  });

  it("let only cli/ (and test code) import server/", () => {
    expect(broken("only-cli-imports-server")).toEqual(["sessions/serves.ts → server/server.ts"]);
  });

  it("let only sessions/ (and the wiring, and test code) import store/", () => {
    expect(broken("store-only-through-sessions")).toEqual(["compaction/commit.ts → store/session-store.ts"]);
  });

  it("keep the plugin SDK off the daemon (it may use the core)", () => {
    expect(broken("sdk-imports-no-daemon")).toEqual(["packages/plugin-sdk/src/uses-daemon.ts → daemon.ts"]);
  });

  it("refuse an import the checker cannot resolve, so no rule passes blind", () => {
    expect(broken("no-unresolvable-import")).toEqual(["plugins/typo.ts → ./no-such-file.js"]);
  });

  it("report nothing else: the imports the layers allow pass", () => {
    expect(violations).toHaveLength(9);
  });
});
