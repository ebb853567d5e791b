import { defineConfig } from "vitest/config";

// In CI a JSON report is written too, so .ci/run can print the plain "N passed, N failed" line.
const reporters = process.env.CI
  ? ["default", ["json", { outputFile: ".ci-results/vitest.json" }] as [string, Record<string, unknown>]]
  : ["default"];

export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters,
    // Adversarial tests record tried / survived / lost rows; this prints their table at the end.
    globalSetup: ["test/adversarial/scoreboard-setup.ts"],
  },
});
