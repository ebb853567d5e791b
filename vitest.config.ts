import { defineConfig } from "vitest/config";

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
    ],
  },
});
