import { defineConfig } from "vitest/config";
import { NODE_RELEASES, otherNodeEnv, type NodeMajor } from "./test/support/other-node.js";

// In CI a JSON report is written too, so .ci/run can print the plain "N passed, N failed" line.
const reporters = process.env.CI
  ? ["default", ["json", { outputFile: ".ci-results/vitest.json" }] as [string, Record<string, unknown>]]
  : ["default"];

/** The end-to-end suite: the tests that run the built daemon, once per store engine. */
const endToEnd = ["test/**/*.e2e.test.ts", "test/adversarial/**/*.test.ts"];
/** Adversarial files that never start a daemon. */
const engineFree = ["test/adversarial/scoreboard.test.ts"];

const shared = {
  exclude: ["**/node_modules/**", "**/dist/**"],
  pool: "forks",
  testTimeout: 30_000,
  hookTimeout: 30_000,
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
    // Adversarial tests record tried / survived / lost rows; this prints their table at the end.
    globalSetup: ["test/adversarial/scoreboard-setup.ts"],
    projects: [
      {
        test: {
          ...shared,
          name: "sqlite",
          include: ["packages/*/src/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts"],
        },
      },
      {
        test: {
          ...shared,
          name: "postgres",
          include: endToEnd,
          exclude: [...shared.exclude, ...engineFree],
          env: { BASE_CONTEXT_TEST_ENGINE: "postgres" },
          // One server for the run; each test file's databases are dropped when the file is done.
          globalSetup: ["test/support/postgres-setup.ts"],
          setupFiles: ["test/support/engine-setup.ts"],
        },
      },
      ...otherNodes.map((major) => ({
        test: {
          ...shared,
          name: `node${major}`,
          include: endToEnd,
          exclude: [...shared.exclude, ...engineFree],
          env: otherNodeEnv(major),
          globalSetup: ["test/support/other-node-setup.ts"],
        },
      })),
    ],
  },
});
