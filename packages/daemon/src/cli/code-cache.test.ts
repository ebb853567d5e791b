/**
 * The daemon's bundle runs with V8's code cache when one matches it exactly, and from source in
 * every other case: no cache yet, a cache of another build (even one of the same length, which
 * V8 alone would take), a damaged or truncated one, one it cannot read. A cache never breaks a
 * start, and one that cannot be written beside the bundle goes to the user's cache folder.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cacheFiles, loadBundle } from "./code-cache.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A CommonJS "bundle" with enough functions for V8 to cache, exporting `answer()`. */
function bundle(answer: string): { path: string; env: NodeJS.ProcessEnv } {
  const folder = mkdtempSync(join(tmpdir(), "bc-code-cache-"));
  folders.push(folder);
  const helpers = Array.from({ length: 50 }, (_, i) => `function helper${i}(x) { return x + ${i}; }`).join("\n");
  const path = join(folder, "bundle", "daemon.cjs");
  mkdirSync(join(folder, "bundle"));
  writeFileSync(path, `"use strict";\n${helpers}\nexports.answer = () => ${JSON.stringify(answer)} + helper1("");\nexports.dirname = __dirname;\n`);
  return { path, env: { XDG_CACHE_HOME: join(folder, "user-cache") } };
}

const answerOf = (loaded: ReturnType<typeof loadBundle>) => (loaded.exports.answer as () => string)();

describe("loadBundle", () => {
  it("compiles from source the first time, writes the cache when asked, and uses it next time", () => {
    const { path, env } = bundle("forty-two");
    const first = loadBundle(path, env);
    expect(first.state).toBe("absent");
    expect(answerOf(first)).toBe("forty-two1");
    expect(first.exports.dirname).toBe(join(path, ".."));
    expect(first.save("start")).toMatch(/^code cache written .* to .*daemon\.cjs\.v\d+.*\.v8cache$/);
    expect(first.save("start")).toBeUndefined(); // once
    expect(readdirSync(join(path, ".."))).toContain(`daemon.cjs.${process.version}-${process.arch}.v8cache`);

    const second = loadBundle(path, env);
    expect(second.state).toBe("used");
    expect(answerOf(second)).toBe("forty-two1");
    expect(second.save("start")).toBeUndefined();
  });

  it("ignores the cache of another build of the bundle, even one of the same length, and replaces it", () => {
    const { path, env } = bundle("aaaa");
    loadBundle(path, env).save("start");
    writeFileSync(path, readFileSync(path, "utf8").replace('"aaaa"', '"bbbb"'));

    const rebuilt = loadBundle(path, env);
    expect(rebuilt.state).toBe("stale");
    expect(rebuilt.reason).toMatch(/another build of the bundle/);
    expect(answerOf(rebuilt)).toBe("bbbb1");
    rebuilt.save("start");
    expect(loadBundle(path, env).state).toBe("used");
  });

  it("runs from source when the cache is damaged, truncated or not a cache", () => {
    const { path, env } = bundle("intact");
    loadBundle(path, env).save("start");
    const [file] = cacheFiles(path, env);
    const good = readFileSync(file!);
    const damaged = Buffer.from(good);
    for (let i = damaged.length - 64; i < damaged.length; i++) damaged[i] = damaged[i]! ^ 0xff;
    const cases: [string, Buffer][] = [
      ["damaged", damaged],
      ["truncated", good.subarray(0, good.length - 100)],
      ["header only", good.subarray(0, good.indexOf(10, 40))],
      ["not a cache", Buffer.from("hello")],
      ["empty", Buffer.alloc(0)],
    ];
    for (const [name, bytes] of cases) {
      writeFileSync(file!, bytes);
      const loaded = loadBundle(path, env);
      expect(loaded.state, name).toBe("stale");
      expect(answerOf(loaded), name).toBe("intact1");
    }
  });

  it("writes to the user's cache folder when the bundle's folder cannot take it, and reads it from there", () => {
    const { path, env } = bundle("elsewhere");
    const [beside, user] = cacheFiles(path, env);
    // A folder where the file should be: neither readable as a cache nor replaceable by one.
    mkdirSync(join(beside!, "in-the-way"), { recursive: true });
    const first = loadBundle(path, env);
    expect(first.state).toBe("stale");
    const said = first.save("start");
    expect(said).toMatch(/^code cache written /);
    expect(said?.endsWith(` to ${user}`)).toBe(true);
    const second = loadBundle(path, env);
    expect(second.state).toBe("used");
    expect(answerOf(second)).toBe("elsewhere1");
  });

  // A first daemon that only answered `initialize` caches its start; the code its later requests
  // compile (context/build, a large answer) would be compiled again by every daemon after it.
  it("rewrites a cache covering the start only, once, when a process has served requests", () => {
    const { path, env } = bundle("covered");
    expect(loadBundle(path, env).save("start")).toMatch(/covering the start\)/);

    const second = loadBundle(path, env);
    expect(second.state).toBe("used");
    expect(second.covers).toBe("start");
    expect(second.save("start")).toBeUndefined();
    expect(second.save("requests")).toMatch(/^code cache written .*covering the start and requests\)/);
    expect(second.save("requests")).toBeUndefined(); // once

    const third = loadBundle(path, env);
    expect(third.state).toBe("used");
    expect(third.covers).toBe("requests");
    expect(answerOf(third)).toBe("covered1");
    expect(third.save("start")).toBeUndefined();
    expect(third.save("requests")).toBeUndefined();
  });

  it("writes a first cache at most twice: the start, then the requests", () => {
    const { path, env } = bundle("twice");
    const first = loadBundle(path, env);
    expect(first.save("start")).toMatch(/^code cache written /);
    expect(first.save("requests")).toMatch(/^code cache written .*start and requests/);
    expect(first.save("requests")).toBeUndefined();
    expect(first.save("start")).toBeUndefined();
  });

  it("takes a cache written before coverage was recorded as covering the start", () => {
    const { path, env } = bundle("older");
    loadBundle(path, env).save("start");
    const [file] = cacheFiles(path, env);
    const bytes = readFileSync(file!);
    const headerStart = bytes.indexOf(10) + 1;
    const headerEnd = bytes.indexOf(10, headerStart);
    const header = JSON.parse(bytes.subarray(headerStart, headerEnd).toString("utf8")) as Record<string, unknown>;
    expect(header.covers).toBe("start");
    delete header.covers;
    writeFileSync(file!, Buffer.concat([bytes.subarray(0, headerStart), Buffer.from(JSON.stringify(header)), bytes.subarray(headerEnd)]));
    const older = loadBundle(path, env);
    expect(older.state).toBe("used");
    expect(older.covers).toBe("start");
    expect(older.save("requests")).toMatch(/^code cache written /);
  });

  it("can be turned off", () => {
    const { path, env } = bundle("off");
    const loaded = loadBundle(path, { ...env, BASE_CONTEXT_CODE_CACHE: "off" });
    expect(loaded.state).toBe("off");
    expect(loaded.save("start")).toBeUndefined();
    expect(loaded.save("requests")).toBeUndefined();
    expect(readdirSync(join(path, ".."))).toEqual(["daemon.cjs"]);
  });
});
