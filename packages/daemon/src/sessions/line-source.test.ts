import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { crc32 } from "node:zlib";
import { fileLines, LineCursor, stringLines } from "./line-source.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

async function linesOf(content: string | Buffer): Promise<string[]> {
  const path = join(folder, "lines.jsonl");
  writeFileSync(path, content);
  const lines: string[] = [];
  for await (const line of fileLines(path)) if (typeof line === "string") lines.push(line);
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

describe("fileLines' cursor and long lines", () => {
  const read = async (path: string, limits?: Parameters<typeof fileLines>[1], cursor = new LineCursor()) => {
    const lines: (string | number)[] = [];
    for await (const line of fileLines(path, limits, cursor)) lines.push(typeof line === "string" ? line : -line.bytes);
    return { lines, cursor };
  };
  const limits = (maxLineBytes: number) => ({ maxLineBytes, maxFileBytes: Number.MAX_SAFE_INTEGER });

  it("gives the offset and the CRC-32 of the whole lines read; a last line without a line break is given, not counted", async () => {
    const path = join(folder, "cursor.jsonl");
    // Lines across the 1 MiB chunk boundary, and a last line still being written.
    const content = `${"a".repeat(700_000)}\n${"b".repeat(700_000)}\r\nc\n{"half`;
    writeFileSync(path, content);
    const { lines, cursor } = await read(path);
    expect(lines).toEqual(["a".repeat(700_000), "b".repeat(700_000), "c", '{"half']);
    const whole = content.lastIndexOf("\n") + 1;
    expect(cursor).toMatchObject({ offset: whole, terminated: false });
    expect(cursor.crc()).toBe(crc32(Buffer.from(content.slice(0, whole))));
  });

  it("starts from a cursor's offset, its CRC carrying on: the same as reading the file whole", async () => {
    const path = join(folder, "resume.jsonl");
    const first = `one\n${"two".repeat(500_000)}\n`;
    writeFileSync(path, `${first}three\nfour\n`);
    const { lines, cursor } = await read(path, undefined, new LineCursor({ offset: first.length, crc: crc32(Buffer.from(first)) }));
    expect(lines).toEqual(["three", "four"]);
    expect(cursor.offset).toBe(first.length + 11);
    expect(cursor.crc()).toBe(crc32(Buffer.from(`${first}three\nfour\n`)));
  });

  it("passes over a line longer than the limit without keeping it, within a chunk and across chunks, and reads on", async () => {
    const path = join(folder, "long.jsonl");
    const content = `short\n${"x".repeat(2000)}\nmiddle\n${"y".repeat(3 << 20)}\nlast\n${"z".repeat(1500)}`;
    writeFileSync(path, content);
    const { lines, cursor } = await read(path, limits(1000));
    expect(lines).toEqual(["short", -2000, "middle", -(3 << 20), "last", -1500]);
    const whole = content.lastIndexOf("\n") + 1;
    expect(cursor.offset).toBe(whole);
    expect(cursor.crc()).toBe(crc32(Buffer.from(content.slice(0, whole))));
  });
});
