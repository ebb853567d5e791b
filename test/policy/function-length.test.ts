/**
 * scripts/lint/function-length.mjs (part of `pnpm lint`): a function over 100 lines fails, whatever
 * its kind (declaration, arrow, method, a test's `it` callback); a test suite's `describe`
 * callback, a list of cases, is not measured, the functions inside it are.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDirs } from "../support/temp-dir.js";

const SCRIPT = join(import.meta.dirname, "..", "..", "scripts", "lint", "function-length.mjs");
const dirs = tempDirs();
afterEach(() => dirs.cleanup());

function check(name: string, text: string): { status: number | null; stderr: string } {
  const path = join(dirs.make("bc-function-length-"), name);
  writeFileSync(path, text);
  const run = spawnSync(process.execPath, [SCRIPT, path], { encoding: "utf8" });
  return { status: run.status, stderr: run.stderr };
}

/** `count` statements, one a line. */
const statements = (count: number) => Array.from({ length: count }, (_, i) => `  total += ${i};`).join("\n");

describe("the function length check", () => {
  it("passes a function of 100 lines and fails one of 101, naming the file, line and function", () => {
    const fits = `export function fits(): number {\n  let total = 0;\n${statements(96)}\n  return total;\n}\n`;
    expect(check("fits.ts", fits)).toEqual({ status: 0, stderr: "" });
    const { status, stderr } = check("long.ts", `// a comment\nexport function long(): number {\n  let total = 0;\n${statements(97)}\n  return total;\n}\n`);
    expect(status).toBe(1);
    expect(stderr).toMatch(/long\.ts:2: long is 101 lines long, more than 100/);
  });

  it("measures arrows, methods and a test's `it` callback", () => {
    const text = [
      "export const arrow = () => {",
      "  let total = 0;",
      statements(99),
      "  return total;",
      "};",
      "export class C {",
      "  method(): number {",
      "    let total = 0;",
      statements(99),
      "    return total;",
      "  }",
      "}",
      'it("a long test", () => {',
      "  let total = 0;",
      statements(99),
      "});",
      "",
    ].join("\n");
    const { status, stderr } = check("kinds.mjs", text.replaceAll(": number", ""));
    expect(status).toBe(1);
    expect(stderr).toMatch(/kinds\.mjs:1: arrow is/);
    expect(stderr).toMatch(/method is/);
    expect(stderr).toMatch(/a callback of it is/);
  });

  it("does not measure a `describe` callback, but the functions inside it", () => {
    const cases = Array.from({ length: 40 }, (_, i) => `  it("case ${i}", () => {\n    expect(${i}).toBe(${i});\n  });`).join("\n");
    expect(check("suite.test.ts", `describe("a suite", () => {\n${cases}\n});\n`)).toEqual({ status: 0, stderr: "" });
    const long = `describe.each([1])("a suite %s", () => {\n  it("one long case", () => {\n    let total = 0;\n${statements(99)}\n  });\n});\n`;
    expect(check("long-case.test.ts", long).status).toBe(1);
  });
});
