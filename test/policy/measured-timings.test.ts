/**
 * No comment of the shipped code, the scripts or the configuration files states a measured figure
 * (scripts/lint/measured-timings.mjs, part of `pnpm lint`): a timing, a size or a proportion only a
 * measurement gives. Figures go to bench results (bench/results/), which `pnpm bench` rewrites;
 * comments say why.
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

  it("finds sizes and proportions only a measurement gives, in bin/ and the configuration files too", () => {
    const root = join(scratch, "more");
    mkdirSync(join(root, "packages", "y", "src"), { recursive: true });
    mkdirSync(join(root, "packages", "y", "bin"), { recursive: true });
    writeFileSync(
      join(root, "packages", "y", "src", "b.ts"),
      [
        "/** The maps take ~80 MB of RSS. */",
        "// Compiling is a quarter of a daemon's start.",
        "// RETURNING costs twice as much there.",
        "/** Tokens repair may add: a quarter of the summary's own budget (a design value). */",
        "// History summaries get 80 % of the reserve; chunks of 1 MiB.",
        "// A round trip costs at least twice the delay.",
      ].join("\n"),
    );
    writeFileSync(join(root, "packages", "y", "bin", "cmd.js"), "// the ES module loader costs ~8 ms of CPU\n");
    writeFileSync(join(root, "vitest.config.ts"), "// sharing processes takes 3x less CPU\n");
    writeFileSync(join(root, ".tool.cjs"), "// this check took 12 s\n");
    writeFileSync(join(root, "notes.ts"), "// not a configuration file: took 12 s\n");
    expect(measuredTimings(root).map((hit) => hit.split(":").slice(0, 2).join(":")).sort()).toEqual([
      ".tool.cjs:1",
      "packages/y/bin/cmd.js:1",
      "packages/y/src/b.ts:1",
      "packages/y/src/b.ts:2",
      "packages/y/src/b.ts:3",
      "vitest.config.ts:1",
    ]);
  });
});
