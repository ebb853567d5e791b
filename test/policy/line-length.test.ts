/**
 * scripts/lint/line-length.mjs (part of `pnpm lint`): a line of code longer than 140 characters
 * fails; the text of one string, template or regex literal does not count, comments do.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { tempDirs } from "../support/temp-dir.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SCRIPT = join(ROOT, "scripts/lint/line-length.mjs");
const WRAP = join(ROOT, "scripts/lint/wrap-long-lines.mjs");
const dirs = tempDirs();
afterEach(() => dirs.cleanup());

function check(name: string, text: string): { status: number | null; stderr: string } {
  const path = join(dirs.make("bc-line-length-"), name);
  writeFileSync(path, text);
  const run = spawnSync(process.execPath, [SCRIPT, path], { encoding: "utf8" });
  return { status: run.status, stderr: run.stderr };
}

const longName = "x".repeat(130);

describe("the line length check", () => {
  it("fails on a line of code over 140 characters, naming the file and line", () => {
    const { status, stderr } = check("long.ts", `const a = 1;\nexport const ${longName} = a + a;\n`);
    expect(status).toBe(1);
    expect(stderr).toMatch(/long\.ts:2: line is 152 characters of code, more than 140/);
  });

  it("counts a comment in full", () => {
    expect(check("comment.mjs", `// ${"word ".repeat(30)}\nexport {};\n`).status).toBe(1);
  });

  it("does not count the text of a long string, template or regex literal, only the code around it", () => {
    const text = [
      `export const message = "${"m".repeat(200)}";`,
      `export const template = (n: number) => \`${"t".repeat(100)} \${n} ${"t".repeat(100)}\`;`,
      `export const pattern = /${"p".repeat(200)}/;`,
      "",
    ].join("\n");
    expect(check("literals.ts", text)).toEqual({ status: 0, stderr: "" });
  });

  it("counts the code inside a template's substitutions", () => {
    expect(check("substitution.ts", `export const t = (n: number) => \`a \${n + ${"n + ".repeat(40)}n} b\`;\n`).status).toBe(1);
  });
});

describe("wrapping long lines (scripts/lint/wrap-long-lines.mjs)", () => {
  it("wraps the too-long statements only, and the check passes afterwards", () => {
    const folder = dirs.make("bc-wrap-");
    const path = join(folder, "wide.ts");
    const args = Array.from({ length: 12 }, (_, i) => `argument${i}`);
    const keptAsIs = "export const   spaced = { a: 1 }; // hand-made layout, not the formatter's";
    const wide = `export const all = call(${args.map((a) => `${a}.name`).join(", ")});`;
    writeFileSync(path, `${keptAsIs}\nfunction call(...values: string[]) {\n  return values;\n}\n${wide}\n`);
    const run = spawnSync(process.execPath, [WRAP, path], { encoding: "utf8" });
    expect(run.status).toBe(0);
    const wrapped = readFileSync(path, "utf8");
    expect(wrapped).toContain(keptAsIs);
    expect(wrapped).toContain("export const all = call(\n  argument0.name,\n  argument1.name,\n");
    expect(spawnSync(process.execPath, [SCRIPT, path], { encoding: "utf8" }).status).toBe(0);
  });
});
