/**
 * Counting on the spot (`countEntriesNow`), which lets an append store its count in the same
 * transaction, and the background lane used by backfills. Kept apart from counter.test.ts: the
 * first test needs a process where no encoding has been loaded on this thread yet.
 */
import { SessionEntry, type EntryInput, type SessionEntry as SessionEntryType } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { isExactCountLoaded, loadExactCount } from "./encodings.js";
import { entryContextText, IMAGE_TOKENS } from "./entry-text.js";
import { useCounters } from "./fixtures/counters.js";
import { generateProse, generateToolResult } from "./fixtures/corpus.js";

const make = useCounters();

const image = { type: "image", data: "aGVsbG8=", mimeType: "image/png" };
const input = (text: string, images = 0): EntryInput => ({
  type: "message",
  message: { role: "user", content: [{ type: "text", text }, ...Array.from({ length: images }, () => image)] },
} as EntryInput);
const stored = (body: EntryInput): SessionEntryType =>
  SessionEntry.parse({ id: "e1", parentId: null, timestamp: "2026-03-01T12:00:00.000Z", ...body });

describe("countEntriesNow", () => {
  it("declines until the encoding is loaded on the calling thread, then counts exactly", async () => {
    const counter = make({ encoding: "o200k_base", estimator: "exact" });
    const entries = [input("hello there", 1), input(generateProse(1500, 3))];
    expect(isExactCountLoaded("o200k_base")).toBe(false);
    expect(counter.countEntriesNow!(entries)).toBeUndefined();
    // The worker loads its own copy: nothing is loaded on this thread by warming it up.
    await counter.warmUp!();
    expect(isExactCountLoaded("o200k_base")).toBe(false);

    counter.loadOnCallingThread!();
    const count = loadExactCount("o200k_base");
    const counts = counter.countEntriesNow!(entries);
    expect(counts).toEqual([count("hello there") + IMAGE_TOKENS, count(entryContextText(stored(entries[1]!)).text)]);
    // The same as the stored entry counts: id, parentId and timestamp do not matter.
    expect(counts).toEqual(await Promise.all(entries.map((entry) => counter.countEntry(stored(entry)))));
  });

  it("declines when the entries' texts together exceed syncMaxChars", () => {
    const counter = make({ encoding: "o200k_base", estimator: "exact" }, { syncMaxChars: 1000 });
    counter.loadOnCallingThread!();
    expect(counter.countEntriesNow!([input("a".repeat(600))])).toEqual([loadExactCount("o200k_base")("a".repeat(600))]);
    expect(counter.countEntriesNow!([input("a".repeat(600)), input("b".repeat(600))])).toBeUndefined();
  });

  it("always counts with chars4", () => {
    const counter = make({ encoding: "o200k_base", estimator: "chars4" });
    expect(counter.countEntriesNow!([input("abcde"), input("x".repeat(100_000), 2)])).toEqual([2, 25_000 + 2 * IMAGE_TOKENS]);
  });
});

describe("countEntriesInBackground", () => {
  it("counts exactly, large texts in chunks, behind interactive counts", async () => {
    const counter = make({ encoding: "o200k_base", estimator: "exact" }, { syncMaxChars: 0, chunkChars: 4096 });
    const count = loadExactCount("o200k_base");
    const entries = [stored(input(generateToolResult(50_000, 2))), stored(input(generateProse(3000, 4), 1)), stored(input(""))];
    const order: string[] = [];
    const background = counter.countEntriesInBackground!(entries).then((counts) => {
      order.push("background");
      return counts;
    });
    const interactive = counter.countTextAsync("hello").then((n) => {
      order.push("interactive");
      return n;
    });
    expect(await background).toEqual(
      entries.map((entry) => count(entryContextText(entry).text) + entryContextText(entry).images * IMAGE_TOKENS),
    );
    expect(await interactive).toBe(count("hello"));
    expect(order).toEqual(["interactive", "background"]);
  });
});

describe("many small counts on the calling thread", () => {
  it("are counted in slices that let the event loop run, with the same results", async () => {
    const counter = make({ encoding: "o200k_base", estimator: "exact" });
    counter.loadOnCallingThread!();
    const count = loadExactCount("o200k_base");
    const texts = Array.from({ length: 3000 }, (_, index) => `${generateProse(700, index)} #${index}`);
    let done = 0;
    let doneWhenTheLoopRan = -1;
    setImmediate(() => (doneWhenTheLoopRan = done));
    const counts = await Promise.all(
      texts.map(async (text) => {
        const n = await counter.countTextAsync(text);
        done++;
        return n;
      }),
    );
    expect(counts).toEqual(texts.map((text) => count(text)));
    // Thousands of ~0.7 KB texts take tens of milliseconds: the event loop got a turn in between.
    expect(doneWhenTheLoopRan).toBeGreaterThanOrEqual(0);
    expect(doneWhenTheLoopRan).toBeLessThan(texts.length);
  });
});
