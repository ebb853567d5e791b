import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Daemon } from "../daemon.js";
import { currentOwner, type JobRecord } from "../sessions/index.js";
import { ABANDONED_AFTER_MS, isAbandoned, isGoneElsewhere, toProtocolJob } from "./jobs.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const job = (extra: Partial<JobRecord> = {}): JobRecord => ({
  id: "j1",
  sessionId: "s1",
  reason: "manual",
  state: "summarizing",
  ownerPid: 999_999_999,
  ownerStart: null,
  createdMs: Date.parse("2026-01-01T10:00:00.000Z"),
  updatedMs: Date.parse("2026-01-01T10:00:01.000Z"),
  ...extra,
});

describe("isAbandoned", () => {
  const now = Date.parse("2026-01-01T10:00:05.000Z");
  it("is true when the owner process is gone, false while it lives", () => {
    expect(isAbandoned(job(), now, () => false)).toBe(true);
    expect(isAbandoned(job(), now, () => true)).toBe(false);
  });
  it("is true for this process's own jobs (a daemon that starts runs nothing yet) and for jobs idle for an hour", () => {
    expect(isAbandoned(job({ ownerPid: process.pid }), now, () => true)).toBe(true);
    expect(isAbandoned(job(), job().updatedMs + ABANDONED_AFTER_MS + 1, () => true)).toBe(true);
  });
  it("takes a job of this pid with another start identity (a daemon on another host) for another daemon's", () => {
    const elsewhere = job({ ownerPid: process.pid, ownerStart: "pg-lease:41" });
    const leaseAlive = { exists: () => true, startOf: () => null, isAlive: () => true };
    expect(isAbandoned(elsewhere, now, leaseAlive)).toBe(false);
    expect(isGoneElsewhere(elsewhere, now, leaseAlive)).toBe(false);
    expect(isGoneElsewhere(elsewhere, now, { ...leaseAlive, isAlive: () => false })).toBe(true);
    // This process's own job, with its own identity, is running, never "gone".
    expect(isGoneElsewhere(job({ ownerPid: process.pid, ownerStart: currentOwner().start }), now, () => false)).toBe(false);
  });
});

describe("toProtocolJob", () => {
  it("gives times as ISO strings, the duration once ended, and the stored result", () => {
    const result = { status: "committed" as const, summarizer: "extractive", jobId: "j1" };
    const ended = job({
      state: "committed",
      endedMs: job().createdMs + 1500,
      summarizer: "extractive",
      entryId: "c1",
      requestId: "r1",
      result,
    });
    expect(toProtocolJob(ended)).toEqual({
      id: "j1",
      sessionId: "s1",
      requestId: "r1",
      reason: "manual",
      state: "committed",
      createdAt: "2026-01-01T10:00:00.000Z",
      updatedAt: "2026-01-01T10:00:01.000Z",
      endedAt: "2026-01-01T10:00:01.500Z",
      durationMs: 1500,
      summarizer: "extractive",
      entryId: "c1",
      result,
    });
  });
});

describe("a daemon starting", () => {
  let folder: string;
  beforeEach(() => (folder = dirs.make()));
  afterEach(() => dirs.remove(folder));

  it("marks the jobs a previous daemon left running as interrupted", async () => {
    const env = { BASE_CONTEXT_HOME: folder };
    const databasePath = join(folder, "sessions.db");
    const first = new Daemon({ env, databasePath, watchSettings: false });
    const { session } = await first.sessions.create({ cwd: folder });
    first.sessions.records.jobs.insert({
      id: "left",
      sessionId: session.id,
      reason: "threshold",
      state: "summarizing",
      ownerPid: process.pid,
      nowMs: Date.now(),
    });
    first.sessions.records.jobs.insert({
      id: "done",
      sessionId: session.id,
      reason: "manual",
      state: "nothing",
      ownerPid: process.pid,
      nowMs: Date.now(),
    });
    await first.dispose();

    const second = new Daemon({ env, databasePath, watchSettings: false });
    try {
      const { jobs } = second.compaction.status({ sessionId: session.id });
      expect(jobs.map((j) => [j.id, j.state])).toEqual([
        ["done", "nothing"],
        ["left", "interrupted"],
      ]);
      expect(jobs[1]!.error).toContain("ended before it finished");
    } finally {
      await second.dispose();
    }
  });
});
