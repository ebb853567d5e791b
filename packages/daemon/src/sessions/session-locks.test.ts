import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Daemon } from "../daemon.js";
import { AppError } from "../errors.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import { SessionLocks } from "./session-locks.js";

function busyError(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("the operation was not refused");
}

describe("SessionLocks", () => {
  it("refuses a second operation on the same session with session_busy, naming the holder", () => {
    const locks = new SessionLocks();
    locks.acquire("s1", "compaction");
    const error = busyError(() => locks.acquire("s1", "tree navigation"));
    expect(error.code).toBe("session_busy");
    expect(error.data).toEqual({ sessionId: "s1", operation: "compaction" });
    expect(() => locks.acquire("s2", "tree navigation")).not.toThrow();
  });

  it("is free again after release, and a second release does not free another holder's lock", () => {
    const locks = new SessionLocks();
    const release = locks.acquire("s1", "compaction");
    release();
    expect(locks.holder("s1")).toBeUndefined();
    locks.acquire("s1", "tree navigation");
    release();
    expect(locks.holder("s1")).toBe("tree navigation");
  });
});

describe("a daemon's locks", () => {
  const dirs = tempDirs();
  let folder: string;
  beforeEach(() => (folder = dirs.make()));
  afterEach(() => dirs.cleanup());

  it("are one for compaction and tree navigation: a navigation during a compaction is refused", async () => {
    const daemon = new Daemon({
      env: { BASE_CONTEXT_HOME: folder },
      databasePath: join(folder, "sessions.db"),
      watchSettings: false,
    });
    try {
      const { session } = await daemon.sessions.create({ cwd: folder });
      const { entry } = await daemon.sessions.append({
        sessionId: session.id,
        entry: { type: "message", message: { role: "user", content: "hi" } },
      });
      await daemon.sessions.append({ sessionId: session.id, entry: { type: "message", message: { role: "user", content: "and more" } } });
      expect(daemon.compaction.locks).toBe(daemon.sessionLocks);
      const release = daemon.compaction.locks.acquire(session.id, "compaction");
      const error = await daemon.tree
        .navigate({ sessionId: session.id, targetId: entry.id, summarize: false })
        .catch((caught: unknown) => caught);
      release();
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("session_busy");
    } finally {
      await daemon.dispose();
    }
  });
});
