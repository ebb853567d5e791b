import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileLines, stringLines } from "./line-source.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

async function linesOf(content: string | Buffer): Promise<string[]> {
  const path = join(folder, "lines.jsonl");
  writeFileSync(path, content);
  const lines: string[] = [];
  for await (const line of fileLines(path)) lines.push(line);
  return lines;
}

let folder: string;
beforeEach(() => (folder = dirs.make()));
afterEach(() => dirs.remove(folder));

describe("fileLines", () => {
  it("reads lines as stringLines does: \\n or \\r\\n, blank lines kept, a last line without newline", async () => {
    const content = 'a\r\n{"b":1}\n\n  \nlast';
    expect(await linesOf(content)).toEqual(["a", '{"b":1}', "", "  ", "last"]);
    expect([...stringLines(content)]).toEqual(["a", '{"b":1}', "", "  ", "last"]);
    expect(await linesOf("")).toEqual([]);
    expect(await linesOf("one\n")).toEqual(["one"]);
  });

  it("keeps characters whole across chunk boundaries and lines longer than a chunk", async () => {
    const chunk = 1 << 20;
    // A 4-byte character straddling the first chunk boundary, a \r\n split by the second, and a
    // line of 2.5 chunks.
    const first = "x".repeat(chunk - 2) + "😀" + "y";
    const second = "z".repeat(chunk - Buffer.byteLength(first + "\n") % chunk - 1);
    const long = "é漢".repeat(Math.ceil((2.5 * chunk) / 5));
    const lines = await linesOf(`${first}\n${second}\r\n${long}\nend`);
    expect(lines).toEqual([first, second, long, "end"]);
  });

  it("fails on a file that cannot be opened", async () => {
    await expect(async () => {
      for await (const _ of fileLines(join(folder, "missing.jsonl"))) void _;
    }).rejects.toThrow(/ENOENT/);
  });
});
