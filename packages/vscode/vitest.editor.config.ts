/**
 * `pnpm test:editor`: the extension's end-to-end test in the real VS Code (code-server) and a real
 * Chromium, apart from `pnpm test` (it installs code-server on its first run and takes minutes).
 * In CI its JSON report goes beside the main suite's, and .ci/run counts both.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL("../..", import.meta.url));

export default defineConfig({
  test: {
    root,
    include: ["packages/vscode/e2e/**/*.e2e.test.ts"],
    reporters: process.env.CI
      ? ["default", ["json", { outputFile: join(root, ".ci-results", "vitest-editor.json") }] as [string, Record<string, unknown>]]
      : ["default"],
    globalSetup: ["packages/vscode/e2e/support/global-setup.ts"],
    setupFiles: ["test/support/quiet-output.ts"],
    silent: "passed-only",
    pool: "forks",
    maxWorkers: 1,
    // One scenario in steps that build on each other; each step waits for what it shows, never for a time.
    sequence: { concurrent: false },
    testTimeout: 180_000,
    hookTimeout: 300_000,
  },
});
