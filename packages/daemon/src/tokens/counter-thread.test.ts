/**
 * Where counts are computed: only the exact counter's worker loads an encoding; the calling
 * thread counts small entries with the tables the worker shares (one copy per process), chars4
 * on the spot; and the background lane used by backfills. Kept apart from counter.test.ts: the first test needs a process where no
 * encoding has been loaded on this thread yet.
 */
import { SessionEntry, type EntryInput, type SessionEntry as SessionEntryType } from "@base-context/protocol";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { loadExactCount } from "./encodings.js";
import { entryContextText, IMAGE_TOKENS } from "./entry-text.js";
import { useCounters } from "./fixtures/counters.js";
import { generateProse, generateToolResult } from "./fixtures/corpus.js";

const make = useCounters();
const requireHere = createRequire(import.meta.url);

const image = { type: "image", data: "aGVsbG8=", mimeType: "image/png" };
const input = (text: string, images = 0): EntryInput => ({
  type: "message",
  message: { role: "user", content: [{ type: "text", text }, ...Array.from({ length: images }, () => image)] },
} as EntryInput);
const stored = (body: EntryInput): SessionEntryType =>
  SessionEntry.parse({ id: "e1", parentId: null, timestamp: "2026-03-01T12:00:00.000Z", ...body });

describe("where the exact counter counts", () => {
  it("never loads an encoding on the calling thread: it counts with the worker's shared copy", async () => {
    const counter = make({ encoding: "o200k_base", estimator: "exact" });
    const entries = [input("hello there", 1), input(generateProse(1500, 3))];
    // Nothing loaded yet: declined (the append counts after its write), and nothing is loaded here.
    expect(counter.countEntriesNow!(entries)).toBeUndefined();
    await counter.warmUp!();
    const now = counter.countEntriesNow!(entries);
    const counts = await Promise.all(entries.map((entry) => counter.countEntry(stored(entry))));
    const texts = await Promise.all(["abc", generateProse(200, 1), ""].map((text) => counter.countTextAsync(text)));
    const background = await counter.countEntriesInBackground!(entries.map(stored));
    // Nothing of gpt-tokenizer was loaded on this thread, by any of the above.
    expect(Object.keys(requireHere.cache).filter((path) => path.includes("gpt-tokenizer"))).toEqual([]);

    // The counts are the exact ones (loading the encoding here now, as an oracle).
    const count = loadExactCount("o200k_base");
    expect(counts).toEqual([count("hello there") + IMAGE_TOKENS, count(entryContextText(stored(entries[1]!)).text)]);
    expect(now).toEqual(counts);
    expect(background).toEqual(counts);
    expect(texts).toEqual([count("abc"), count(generateProse(200, 1)), 0]);
  });

  it("counts on the spot only entries of at most syncMaxChars in all", async () => {
    const counter = make({ encoding: "o200k_base", estimator: "exact" }, { syncMaxChars: 1000 });
    await counter.warmUp!();
    expect(counter.countEntriesNow!([input("a".repeat(600))])).toEqual([await counter.countTextAsync("a".repeat(600))]);
    expect(counter.countEntriesNow!([input("a".repeat(600)), input("b".repeat(600))])).toBeUndefined();
  });
});

describe("countEntriesNow", () => {
  it("always counts with chars4", () => {
    const counter = make({ encoding: "o200k_base", estimator: "chars4" });
    expect(counter.countEntriesNow!([input("abcde"), input("x".repeat(100_000), 2)])).toEqual([2, 25_000 + 2 * IMAGE_TOKENS]);
  });
});

describe("countEntriesInBackground", () => {
  it("counts exactly, large texts in chunks, behind interactive counts", async () => {
    const counter = make({ encoding: "o200k_base", estimator: "exact" }, { chunkChars: 4096 });
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
    const expected = entries.map((entry) => count(entryContextText(entry).text) + entryContextText(entry).images * IMAGE_TOKENS);
    expect(await background).toEqual(expected);
    expect(await interactive).toBe(count("hello"));
    expect(order).toEqual(["interactive", "background"]);
  });
});
