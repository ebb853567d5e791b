/**
 * No comment of the shipped sources states a measured timing (scripts/lint/measured-timings.mjs):
 * figures go to bench results (bench/results/), which `pnpm bench` rewrites; comments say why.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const script = join(root, "scripts", "lint", "measured-timings.mjs");
const { measuredTimings } = (await import(script)) as { measuredTimings(root: string): string[] };

const scratch = mkdtempSync(join(tmpdir(), "bc-measured-timings-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("measured timings in source comments", () => {
  it("finds none in the packages and scripts", () => {
    expect(measuredTimings(root)).toEqual([]);
    expect(spawnSync(process.execPath, [script], { encoding: "utf8" }).status).toBe(0);
  });

  it("finds a figure of measurement, and leaves design values and code alone", () => {
    const source = join(scratch, "packages", "x", "src");
    mkdirSync(source, { recursive: true });
    mkdirSync(join(scratch, "scripts"), { recursive: true });
    writeFileSync(
      join(source, "a.ts"),
      [
        "/** Loading it cost ~4 ms of CPU. */",
        "// The p99 went from 17 to 8 ms.",
        "/**",
        " * A thread costs roughly",
        " * 100–150 ms to start.",
        " */",
        "/** Quiet time before reloading (default 20 ms). */",
        "const pauseMs = 4; // at most 4 ms between tries",
        'const text = "took ~5 ms";',
      ].join("\n"),
    );
    writeFileSync(join(source, "a.test.ts"), "// a test may say it took ~5 ms\n");
    expect(measuredTimings(scratch).map((hit) => hit.split(":").slice(0, 2).join(":"))).toEqual([
      "packages/x/src/a.ts:1",
      "packages/x/src/a.ts:2",
      "packages/x/src/a.ts:5",
    ]);
  });
});
