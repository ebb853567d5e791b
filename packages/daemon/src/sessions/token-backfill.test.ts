/**
 * Imports store entries without counts; readers still get exact counts (computed on demand), and
 * the background backfill fills them in newest first, only when the daemon is idle.
 */
import type { SessionEntry } from "@base-context/protocol";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionStore } from "../store/index.js";
import { createTokenCounter } from "../tokens/create-counter.js";
import { loadExactCount } from "../tokens/encodings.js";
import { entryContextText, IMAGE_TOKENS } from "../tokens/entry-text.js";
import type { TokenCounter } from "../tokens/counter.js";
import { FakeCounter, sequentialIds } from "./fixtures/test-helpers.js";
import { SessionService } from "./service.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const exactCount = (entry: SessionEntry) => {
  const { text, images } = entryContextText(entry);
  return loadExactCount("o200k_base")(text) + images * IMAGE_TOKENS;
};

describe("token counts of imported sessions", () => {
  let folder: string;
  let store: SessionStore;
  const counters: TokenCounter[] = [];

  const open = (counter: TokenCounter) => {
    counters.push(counter);
    const ids = sequentialIds();
    return new SessionService(store, counter, { ids, import: { batchSize: 4 } });
  };

  beforeEach(() => {
    folder = dirs.make();
    store = new SessionStore({ path: join(folder, "sessions.db"), ids: sequentialIds(), checkpoints: "sqlite" });
  });
  afterEach(async () => {
    await Promise.all(counters.splice(0).map((counter) => counter.dispose()));
    await store.close();
    dirs.remove(folder);
  });

  it("imports without counting, and readers still get exact counts (computed when read)", async () => {
    const counter = new FakeCounter();
    const sessions = open(counter);
    const { session } = await sessions.import({ format: "pi-jsonl", path: fixture("pi-v3.jsonl") });
    expect(counter.counted).toBe(0);
    expect(store.uncountedEntries(session.id, 100)).toHaveLength(19);

    const path = await sessions.getCountedPath(session.id);
    for (const counted of path) expect(counted.tokens).toBe(FakeCounter.expected(counted.entry));
    // What was counted for the reader is stored.
    for (const counted of path) expect(store.getEntry(session.id, counted.entry.id)!.tokens).toBe(counted.tokens);
  });

  it("backfills every missing count with the exact counter, newest first", async () => {
    const counter = createTokenCounter({ encoding: "o200k_base", estimator: "exact" });
    const sessions = open(counter);
    const { session } = await sessions.import({ format: "pi-jsonl", path: fixture("pi-v3.jsonl") });
    const seqsCounted: number[] = [];
    const setTokensMany = store.setTokensMany.bind(store);
    store.setTokensMany = (sessionId, counts) => {
      for (const { id } of counts) seqsCounted.push(store.getEntry(sessionId, id)!.seq);
      setTokensMany(sessionId, counts);
    };

    const backfill = sessions.startBackfill({ batchSize: 3 });
    await backfill.done();

    expect(store.uncountedEntries(session.id, 100)).toEqual([]);
    expect(seqsCounted).toEqual([...seqsCounted].sort((a, b) => b - a));
    for (const stored of [...store.entriesInOrder(session.id)].flat()) expect(stored.tokens).toBe(exactCount(stored.entry));
  });

  it("runs a batch only when the daemon is idle, and stops when told", async () => {
    const sessions = open(new FakeCounter());
    const { session } = await sessions.import({ format: "pi-jsonl", path: fixture("pi-v3.jsonl") });
    let release: () => void = () => undefined;
    let waits = 0;
    const backfill = sessions.startBackfill({
      batchSize: 5,
      whenIdle: () => {
        waits++;
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.uncountedEntries(session.id, 100)).toHaveLength(19);
    release(); // the first idle moment: find the sessions
    await new Promise((resolve) => setTimeout(resolve, 20));
    release(); // the second: one batch
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.uncountedEntries(session.id, 100)).toHaveLength(14);
    expect(waits).toBe(3);
    backfill.stop();
    release();
    await backfill.done();
    expect(store.uncountedEntries(session.id, 100)).toHaveLength(14);
  });

  it("resumes what a previous process left: every session with missing counts", async () => {
    const content = readFileSync(fixture("pi-v3.jsonl"), "utf8");
    const first = await open(new FakeCounter()).import({ format: "pi-jsonl", content });
    const second = await open(new FakeCounter()).import({ format: "pi-jsonl", content: content.replace(/9d2f4b6a/g, "00000000") });
    expect(store.sessionsWithUncountedEntries().sort()).toEqual([first.session.id, second.session.id].sort());
    await open(new FakeCounter()).startBackfill().done();
    expect(store.sessionsWithUncountedEntries()).toEqual([]);
  });
});
