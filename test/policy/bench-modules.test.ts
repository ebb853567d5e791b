/**
 * The benches load built modules by path (bench/lib/dist.mjs): `daemonModule(…)` from the
 * daemon's dist/, `fixtureModule(…)` from dist-bench/ (test fixtures, compiled apart so they never
 * ship). A path must name a source that its build emits, or `pnpm bench` fails where nobody runs
 * it often: this checks every such path statically.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const DAEMON_SRC = join(ROOT, "packages", "daemon", "src");
/** What the daemon's tsconfig.json leaves out of dist/. */
const NOT_SHIPPED = /(\.test\.ts$|(^|\/)test-support\.ts$|(^|\/)fixtures\/|(^|\/)fixtures\.ts$)/;

function benchFiles(): string[] {
  const dir = join(ROOT, "bench");
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".mjs"))
    .map((name) => join(dir, name));
}

/** Every `<loader>("path")` call in the benches. */
function loaded(loader: string): string[] {
  const pattern = new RegExp(`\\b${loader}\\("([^"]+)"\\)`, "g");
  return [...new Set(benchFiles().flatMap((file) => [...readFileSync(file, "utf8").matchAll(pattern)].map((m) => m[1]!)))];
}

const source = (path: string) => path.replace(/\.js$/, ".ts");

describe("the modules the benches load", () => {
  it("from the daemon's dist/: sources that ship", () => {
    const paths = loaded("daemonModule");
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) {
      expect(existsSync(join(DAEMON_SRC, source(path))), path).toBe(true);
      expect(NOT_SHIPPED.test(source(path)), `${path} is not in dist/: load it with fixtureModule`).toBe(false);
    }
  });

  it("from dist-bench/: fixtures its tsconfig compiles", () => {
    const config = readFileSync(join(ROOT, "packages", "daemon", "tsconfig.bench.json"), "utf8");
    const paths = loaded("fixtureModule");
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) {
      expect(existsSync(join(DAEMON_SRC, source(path))), path).toBe(true);
      expect(config, `${path} is not compiled by tsconfig.bench.json`).toContain(`"src/${source(path)}"`);
    }
  });
});
