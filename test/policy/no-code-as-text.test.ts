/**
 * No shipped file runs code it holds as text (docs/architecture.md#workers-one-entry): a worker,
 * a helper process or a loader is a module of its own, type-checked, linted and tested like the
 * rest. This looks for the ways code is run from a string: a worker started with `eval: true`,
 * `node -e` / `--eval`, `new Function`, `eval(`, a function's `toString()` spliced into a
 * template, a `data:text/javascript` URL. Test code may (it is not shipped).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { withoutComments } from "../support/export-users.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CODE_AS_TEXT = [
  /\beval:\s*true\b/,
  /(?:execPath|["']node["'])\s*,\s*\[[^\]]*["'](?:-e|--eval|-p|--print)["']/,
  /\bnew Function\s*\(/,
  /(?<![\w$.])eval\s*\(/,
  /\$\{[\w$.]+\.toString\(\)\}/,
  /data:text\/javascript/,
];
const isTest = (file: string) => /\.test\.ts$|(^|\/)test-support\.ts$|(^|\/)fixtures(\.ts$|\/)/.test(file);

function shippedFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!["node_modules", "dist", "fixtures"].includes(entry.name)) shippedFiles(path, out);
    } else if (/\.(ts|js|mjs|cjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts") && !isTest(path)) out.push(path);
  }
  return out;
}

describe("code run from text", () => {
  it("is in no shipped file", () => {
    const packages = readdirSync(join(ROOT, "packages")).flatMap((name) => [join("packages", name, "src"), join("packages", name, "bin")]);
    const files = packages.flatMap((dir) => {
      try {
        return shippedFiles(dir);
      } catch {
        return [];
      }
    });
    expect(files.length).toBeGreaterThan(300);
    const found = files.flatMap((file) => {
      const code = withoutComments(file, readFileSync(join(ROOT, file), "utf8"));
      return CODE_AS_TEXT.filter((pattern) => pattern.test(code)).map((pattern) => `${relative(ROOT, join(ROOT, file))}: ${pattern}`);
    });
    expect(found).toEqual([]);
  });

  it("is found where it is", () => {
    const samples = [
      'new Worker(source, { eval: true });',
      'spawn(process.execPath, ["-e", HELPER]);',
      "const f = new Function('return 1');",
      // A template of the code being checked, not of this test: its `${` is spelled in two pieces.
      "const source = `const merge = $" + "{mergeLongPiece.toString()};`;",
    ];
    for (const sample of samples) expect(CODE_AS_TEXT.some((pattern) => pattern.test(withoutComments("x.ts", sample)))).toBe(true);
    expect(CODE_AS_TEXT.some((pattern) => pattern.test('spawnSync("node", ["--version"]);'))).toBe(false);
  });
});
