#!/usr/bin/env node
// The last step of `pnpm test` (after the build and the lint): vitest, with its arguments passed
// on. Its log is for a reader: no colour codes when the output is not a terminal (a CI log, a
// file), whatever FORCE_COLOR or CI say; what the tests print shows only for a failed test
// (test/support/quiet-output.ts).
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const env = { ...process.env };
if (!process.stdout.isTTY) {
  env.NO_COLOR = "1";
  delete env.FORCE_COLOR;
}
const vitest = join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", "vitest", "vitest.mjs");
const result = spawnSync(process.execPath, [vitest, "run", ...process.argv.slice(2)], { stdio: "inherit", env });
process.exitCode = result.status ?? 1;
