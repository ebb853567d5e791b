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
  // The layer table, row by row: each layer reaching above itself …
  "packages/daemon/src/ids.ts": 'import type { Session } from "./sessions/service.js";\nexport type I = Session;\n',
  "packages/daemon/src/workers/start-worker.ts": 'import { count } from "../tokens/counter.js";\nexport const w = count;\n',
  "packages/daemon/src/store/uses-tokens.ts": 'import { count } from "../tokens/counter.js";\nexport const u = count;\n',
  "packages/daemon/src/store/postgres/schema.ts": 'import { c } from "../sqlite/checkpointer.js";\nexport const p = c;\n',
  "packages/daemon/src/tokens/counter.ts": 'import type { Session } from "../sessions/service.js";\nexport const count = (s: Session) => s.id.length;\n',
  "packages/daemon/src/sessions/compacts.ts": 'import { c } from "../compaction/commit.js";\nexport const s = c;\n',
  "packages/daemon/src/summarizer/reads-sessions.ts": 'import type { Session } from "../sessions/service.js";\nexport type R = Session;\n',
  "packages/daemon/src/summarizer/model.ts": "export interface Model { label: string }\n",
  "packages/daemon/src/settings/uses-summarizer.ts": 'import type { Model } from "../summarizer/model.js";\nexport type U = Model;\n',
  "packages/daemon/src/hooks/tree-hooks.ts": 'import { b } from "../tree/b.js";\nexport const h = b;\n',
  "packages/daemon/src/plugins/adapters.ts": 'import { c } from "../compaction/commit.js";\nexport const a = c;\n',
  "packages/daemon/src/compaction/runs-plugins.ts": 'import { a } from "../plugins/adapters.js";\nexport const r = a;\n',
  "packages/daemon/src/compaction/wires.ts": 'import { d } from "../daemon.js";\nexport const w = d;\n',
  "packages/daemon/src/server/starts-cli.ts": 'import { s } from "../cli/serve.js";\nexport const x = s;\n',
  // … and what the table allows: the store starting a worker, the hook points naming the client's
  // model, the plugin host implementing them, the command building a daemon.
  "packages/daemon/src/store/sqlite/checkpointer.ts": 'import { count } from "../../workers/start-worker.js";\nexport const c = count;\n',
  "packages/daemon/src/hooks/compact-hooks.ts": 'import type { Model } from "../summarizer/model.js";\nexport type H = Model;\n',
  "packages/daemon/src/plugins/host.ts": 'import type { H } from "../hooks/compact-hooks.js";\nexport type P = H;\n',
  "packages/daemon/src/cli/main.ts": 'import { d } from "../daemon.js";\nexport const m = d;\n',
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

  it("keep the leaf modules and workers/ off every layer", () => {
    expect(broken("leaf-modules-import-no-layer")).toEqual(["ids.ts → sessions/service.ts", "workers/start-worker.ts → tokens/counter.ts"]);
  });

  it("keep store/ and tokens/ at the bottom, apart (store/ may start a worker), and the two engines apart", () => {
    expect(broken("store-imports-no-layer-above")).toEqual(["store/uses-tokens.ts → tokens/counter.ts"]);
    expect(broken("store-engines-stay-apart")).toEqual(["store/postgres/schema.ts → store/sqlite/checkpointer.ts"]);
    expect(broken("tokens-imports-no-layer-above")).toEqual(["tokens/counter.ts → sessions/service.ts"]);
  });

  it("let sessions/ build on store/ and tokens/ only", () => {
    expect(broken("sessions-imports-no-service")).toEqual(["sessions/compacts.ts → compaction/commit.ts", "sessions/serves.ts → server/server.ts"]);
  });

  it("keep summarizer/ and settings/ off the other services", () => {
    expect(broken("summarizer-imports-no-service")).toEqual(["summarizer/reads-sessions.ts → sessions/service.ts"]);
    expect(broken("settings-imports-no-service")).toEqual(["settings/uses-summarizer.ts → summarizer/model.ts"]);
  });

  it("let plugins/ and the pipelines meet in hooks/ only", () => {
    expect(broken("hooks-import-only-the-summarizer")).toEqual(["hooks/tree-hooks.ts → tree/b.ts"]);
    expect(broken("plugins-imports-no-pipeline")).toEqual(["plugins/adapters.ts → compaction/commit.ts"]);
    expect(broken("pipelines-import-no-plugins")).toEqual(["compaction/runs-plugins.ts → plugins/adapters.ts"]);
  });

  it("let only cli/ and server/ build a daemon, and nothing import cli/", () => {
    expect(broken("only-cli-and-server-import-the-wiring")).toEqual([
      "compaction/wires.ts → daemon.ts",
      "packages/plugin-sdk/src/uses-daemon.ts → daemon.ts",
    ]);
    expect(broken("nothing-imports-cli")).toEqual(["server/starts-cli.ts → cli/serve.ts"]);
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
    expect(violations).toHaveLength(24);
  });
});
