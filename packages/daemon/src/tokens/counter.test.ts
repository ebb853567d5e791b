/**
 * The factory's counters: counts in the worker (chunked or not) equal counts on this thread, entries count their
 * context text plus 1,200 per image, and `dispose` stops the worker. Event-loop stalls are timing
 * and live in bench/tokens.mjs.
 */
import { SessionEntry, type SessionEntry as SessionEntryType } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { createTokenCounter } from "./create-counter.js";
import { loadExactCount } from "./encodings.js";
import { COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX } from "./entry-text.js";
import { useCounters } from "./fixtures/counters.js";
import { CORPUS, generateToolResult } from "./fixtures/corpus.js";

const make = useCounters();

const entry = (body: Record<string, unknown>): SessionEntryType =>
  SessionEntry.parse({ id: "e1", parentId: null, timestamp: "2026-03-01T12:00:00.000Z", ...body });
const image = { type: "image", data: "aGVsbG8=", mimeType: "image/png" };

describe.each(["o200k_base", "cl100k_base"] as const)("exact counter (%s)", (encoding) => {
  const exact = loadExactCount(encoding);

  it("counts in the worker exactly as on the calling thread", async () => {
    const counter = make({ encoding, estimator: "exact" });
    const texts = Object.values(CORPUS);
    const counts = await Promise.all(texts.map((text) => counter.countTextAsync(text)));
    expect(counts).toEqual(texts.map((text) => exact(text)));
  });

  it("counts a large text in chunks to the same total", async () => {
    const counter = make({ encoding, estimator: "exact" }, { chunkChars: 4096 });
    const text = generateToolResult(300_000);
    expect(await counter.countTextAsync(text)).toBe(exact(text));
  });

  it("counts one long line (no place to split) to the same total", async () => {
    const counter = make({ encoding, estimator: "exact" }, { chunkChars: 4096 });
    const text = "=".repeat(50_000) + "abc".repeat(10_000);
    expect(await counter.countTextAsync(text)).toBe(exact(text));
  });

  it("counts an entry's context text plus 1,200 tokens per image", async () => {
    const counter = make({ encoding, estimator: "exact" });
    const user = entry({ type: "message", message: { role: "user", content: [{ type: "text", text: "hello there" }, image] } });
    expect(await counter.countEntry(user)).toBe(exact("hello there") + 1200);
    expect(await counter.countEntry(entry({ type: "label", targetId: "e0", label: "x" }))).toBe(0);
  });
});

describe("chars4 counter", () => {
  const counter = createTokenCounter({ encoding: "o200k_base", estimator: "chars4" });

  it("counts ceil(chars / 4)", async () => {
    expect(await counter.countTextAsync("abcde")).toBe(2);
  });

  it("counts an entry's context text, an image as 1,200 tokens", async () => {
    const user = entry({ type: "message", message: { role: "user", content: [{ type: "text", text: "abcde" }, image, image] } });
    expect(await counter.countEntry(user)).toBe(2 + 2400);
    const compaction = entry({ type: "compaction", summary: "S", firstKeptEntryId: "e0", tokensBefore: null });
    const wrapped = `${COMPACTION_SUMMARY_PREFIX}S${COMPACTION_SUMMARY_SUFFIX}`;
    expect(await counter.countEntry(compaction)).toBe(Math.ceil(wrapped.length / 4));
  });
});

describe("dispose", () => {
  it("rejects counts that were pending and counts asked for afterwards", async () => {
    const counter = make({ encoding: "o200k_base", estimator: "exact" });
    const pending = expect(counter.countTextAsync("=".repeat(200_000))).rejects.toThrow(/disposed/);
    await counter.dispose();
    await pending;
    await expect(counter.countTextAsync("more")).rejects.toThrow(/disposed/);
  });

  it("is harmless when no worker was ever started", async () => {
    await expect(make({ encoding: "o200k_base", estimator: "exact" }).dispose()).resolves.toBeUndefined();
  });
});
