import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { NODE_RELEASES, otherNodeEnv, type NodeMajor } from "./test/support/other-node.js";

// In CI a JSON report is written too, so .ci/run can print the plain "N passed, N failed" line.
const reporters = process.env.CI
  ? ["default", ["json", { outputFile: ".ci-results/vitest.json" }] as [string, Record<string, unknown>]]
  : ["default"];

/**
 * The end-to-end files that run a second time on PostgreSQL: those where the store engine changes
 * what happens (writes, transactions, locks, search, several daemons on one store, crashes, the
 * engine's own commands). The rest of the end-to-end suite (CLI output, plugins, clients, docs)
 * sits above the store's contract, which the store's own tests check on both engines.
 * docs/storage.md#the-tests-on-postgresql says why each is here.
 */
const storeBound = [
  "test/adversarial/**/*.test.ts",
  "test/store-engine.e2e.test.ts",
  "test/concurrency.e2e.test.ts",
  "test/migrate.e2e.test.ts",
  "test/doctor-store.e2e.test.ts",
  "test/sessions.e2e.test.ts",
  "test/import-export.e2e.test.ts",
  "test/compaction.e2e.test.ts",
  "test/tree.e2e.test.ts",
  "test/turn-end-crash.e2e.test.ts",
  "test/lifecycle.e2e.test.ts",
  "test/socket.e2e.test.ts",
  "test/socket-neighbours.e2e.test.ts",
];
/** The end-to-end suite: the tests that run the built daemon. */
const endToEnd = ["test/**/*.e2e.test.ts", "test/adversarial/**/*.test.ts"];
/**
 * End-to-end files the extra Node passes leave out: they drive other programs whose behaviour does
 * not depend on the daemon's Node (the real Claude Code, Codex and pi, Python, npm; the Agents SDK
 * test runs under Node 24 in every pass already), or repeat long failure loops (the crash storms:
 * the plugin host's start, stop and isolation are checked on each Node by the other plugin files).
 * docs/node-versions.md says so.
 */
const notOnOtherNodes = [
  "test/claude-code-real.e2e.test.ts",
  // The hook under each Node is claude-code-hook-cli.e2e.test.ts's; this one is about Claude Code.
  "test/claude-code-hooks.e2e.test.ts",
  "test/codex-real.e2e.test.ts",
  "test/pi-extension.e2e.test.ts",
  "test/pi-extension-tui.e2e.test.ts",
  "test/openai-agents.e2e.test.ts",
  "test/openai-agents-window.e2e.test.ts",
  "test/openai-agents-install.e2e.test.ts",
  "test/python-client.e2e.test.ts",
  "test/readme-from-a-clone.e2e.test.ts",
  "test/demo.e2e.test.ts",
  "test/plugins-storm.e2e.test.ts",
];
/**
 * The packages' own tests run in shared processes (`isolate: false`: one process per worker runs
 * file after file), which takes less CPU than a fresh process and module graph per file.
 * These files check what loading a module does (which schemas it builds, which thread loads an
 * encoding, watches started by the first read) or mock a module another file may have loaded
 * already (vi.mock takes effect only in a fresh module graph), so each gets a fresh process.
 */
const unitTests = "packages/*/src/**/*.test.ts";
const needsFreshModules = [
  "packages/protocol/src/declare.test.ts",
  "packages/protocol/src/shared-schemas.test.ts",
  "packages/daemon/src/tokens/counter-thread.test.ts",
  "packages/daemon/src/settings/manager-watch-start.test.ts",
  "packages/daemon/src/cli/open-once.test.ts",
];
/** Adversarial files that never start a daemon. */
const engineFree = ["test/adversarial/scoreboard.test.ts"];
/**
 * The repository's policy tests: they check the repository (its lint scripts and import rules, its
 * docs' citations, what the packages ship, the benches' paths, the generated reference), not the
 * product, so they run once, in a project of their own (`pnpm test:policy`).
 */
const policy = "test/policy/**/*.test.ts";

const shared = {
  exclude: ["**/node_modules/**", "**/dist/**"],
  pool: "forks",
  // One test file per core at a time. Vitest's default leaves a core free (cores − 1: a single
  // worker on two cores), yet most end-to-end files spend their time waiting on the processes they
  // start, so a file per core keeps both busy. (A file more than cores was slower: the files that
  // run at once then compete for the CPU more than they wait.)
  maxWorkers: availableParallelism(),
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // What a test prints (daemon logs, forwarded child output) shows only when it fails.
  setupFiles: ["test/support/quiet-output.ts"],
} as const;

/**
 * Extra passes of the end-to-end suite (SQLite) with the daemons and CLIs under other Node releases
 * (test/support/other-node.ts): in CI, or when BASE_CONTEXT_TEST_NODES names them ("22,24").
 */
const otherNodes = (process.env.BASE_CONTEXT_TEST_NODES ?? (process.env.CI ? Object.keys(NODE_RELEASES).join(",") : ""))
  .split(",")
  .filter(Boolean)
  .map((major) => {
    if (!(major in NODE_RELEASES)) throw new Error(`BASE_CONTEXT_TEST_NODES: no pinned Node ${major} (known: ${Object.keys(NODE_RELEASES).join(", ")})`);
    return Number(major) as NodeMajor;
  });

export default defineConfig({
  test: {
    reporters,
    // console.* of passing tests is dropped; a failed test's is printed with its failure.
    silent: "passed-only",
    // Only tests slower than this are listed one by one under their file.
    slowTestThreshold: 15_000,
    // Adversarial tests record tried / survived / lost rows; this prints their table at the end.
    globalSetup: ["test/adversarial/scoreboard-setup.ts"],
    projects: [
      {
        test: {
          ...shared,
          name: "unit",
          include: [unitTests],
          exclude: [...shared.exclude, ...needsFreshModules],
          isolate: false,
        },
      },
      {
        test: {
          ...shared,
          name: "sqlite",
          include: [...needsFreshModules, "examples/**/*.test.ts", "test/**/*.test.ts"],
          exclude: [...shared.exclude, policy],
        },
      },
      {
        test: {
          ...shared,
          name: "policy",
          include: [policy],
        },
      },
      {
        test: {
          ...shared,
          name: "postgres",
          include: storeBound,
          exclude: [...shared.exclude, ...engineFree],
          env: { BASE_CONTEXT_TEST_ENGINE: "postgres" },
          // One server for the run; each test file's databases are dropped when the file is done.
          globalSetup: ["test/support/postgres-setup.ts"],
          setupFiles: [...shared.setupFiles, "test/support/engine-setup.ts"],
        },
      },
      ...otherNodes.map((major) => ({
        test: {
          ...shared,
          name: `node${major}`,
          include: endToEnd,
          exclude: [...shared.exclude, ...engineFree, ...notOnOtherNodes],
          env: otherNodeEnv(major),
          globalSetup: ["test/support/other-node-setup.ts"],
        },
      })),
    ],
  },
});
