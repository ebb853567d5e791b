import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isAbandoned, isGoneElsewhere } from "../../compaction/jobs.js";
import type { JobRecord } from "../compaction-jobs.js";
import { currentOwner, isOwnerAlive } from "../owner.js";
import { DaemonLease, isLeaseAlive, LEASE_LOCK_SPACE, type LeaseDatabase, leaseIdOf, leaseOwner, leaseProbe } from "./lease.js";

/** The daemons whose lease is held now, as the table and the lock tell. */
function liveDaemons(db: LeaseDatabase): { id: number; host: string; pid: number; startedMs: number }[] {
  return db
    .query<{ id: number; host: string; pid: number; started_ms: number }>("SELECT id, host, pid, started_ms FROM daemons ORDER BY id")
    .rows.filter((row) => isLeaseAlive(db, Number(row.id)))
    .map((row) => ({ id: Number(row.id), host: row.host, pid: row.pid, startedMs: Number(row.started_ms) }));
}
import { usePostgresDatabases } from "./test-support.js";

const postgres = usePostgresDatabases();
const leaseProcess = fileURLToPath(new URL("../fixtures/pg-lease-process.mjs", import.meta.url));

/** The first line the child prints, split in words. */
function firstLine(child: ChildProcess): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const end = seen.indexOf("\n");
      if (end >= 0) resolve(seen.slice(0, end).split(" "));
    });
    child.once("exit", (code) => reject(new Error(`lease process exited with ${code} before it printed its lease`)));
  });
}

/** Resolves once the lock of lease `id` is released (its backend has exited). */
async function backendGone(db: LeaseDatabase, id: number): Promise<void> {
  while (isLeaseAlive(db, id)) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** A running job of `owner`, last updated now. */
function runningJob(owner: { pid: number; start: string | null }): JobRecord {
  const now = Date.now();
  return {
    id: "j",
    sessionId: "s",
    reason: "manual",
    state: "summarizing",
    ownerPid: owner.pid,
    ownerStart: owner.start,
    createdMs: now,
    updatedMs: now,
  };
}

describe("daemon leases on PostgreSQL", () => {
  it("names the lease in the owner, is alive while held, and ends with release", async () => {
    const { db } = await postgres.open();
    const lease = DaemonLease.acquire(db, { host: "host-a", nowMs: 1000 });
    expect(lease.owner).toEqual({ pid: process.pid, start: `pg-lease:${lease.id}` });
    expect(leaseIdOf(lease.owner)).toBe(lease.id);
    expect(isLeaseAlive(db, lease.id)).toBe(true);
    expect(isOwnerAlive(lease.owner, leaseProbe(db))).toBe(true);
    expect(liveDaemons(db)).toEqual([{ id: lease.id, host: "host-a", pid: process.pid, startedMs: 1000 }]);
    lease.release();
    expect(isLeaseAlive(db, lease.id)).toBe(false);
    expect(isOwnerAlive(lease.owner, leaseProbe(db))).toBe(false);
    expect(db.query("SELECT 1 FROM daemons").rowCount).toBe(0);
  });

  it("tells leases apart, ignores the pid of an owner that names a lease, and probes other owners as processes", async () => {
    const { url, db } = await postgres.open();
    const first = DaemonLease.acquire(db);
    const second = DaemonLease.acquire(postgres.connect(url));
    expect(second.id).not.toBe(first.id);
    const probe = leaseProbe(db);
    // Same pid, another lease (a daemon on another host with this pid): decided by the lease.
    expect(isOwnerAlive(leaseOwner(first.id + second.id + 1), probe)).toBe(false);
    second.release();
    expect(isOwnerAlive(first.owner, probe)).toBe(true);
    expect(isOwnerAlive(second.owner, probe)).toBe(false);
    // An owner without a lease (copied from a SQLite file) is a process of this host.
    expect(isOwnerAlive(currentOwner(), probe)).toBe(true);
    expect(leaseIdOf(currentOwner())).toBeUndefined();
    first.release();
  });

  it("sees a SIGKILLed daemon's lease dead as soon as its connection is gone: its running job is abandoned", async () => {
    const { url, db } = await postgres.open();
    const child = spawn(process.execPath, [leaseProcess, url], { stdio: ["ignore", "pipe", "inherit"] });
    let owner: { pid: number; start: string | null };
    try {
      const [word, id, pid] = await firstLine(child);
      expect(word).toBe("lease");
      owner = leaseOwner(Number(id), Number(pid));
      const probe = leaseProbe(db);
      expect(isOwnerAlive(owner, probe)).toBe(true);
      expect(isGoneElsewhere(runningJob(owner), Date.now(), probe)).toBe(false);
      expect(liveDaemons(db).map((daemon) => daemon.pid)).toEqual([child.pid]);

      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
      // The server ends the dead client's backend (and drops its locks) when it sees the socket
      // closed; that happens after the kill, so it is waited for, not assumed.
      await backendGone(db, Number(id));
      expect(isOwnerAlive(owner, probe)).toBe(false);
      expect(isGoneElsewhere(runningJob(owner), Date.now(), probe)).toBe(true);
      expect(isAbandoned(runningJob(owner), Date.now(), probe)).toBe(true);
      expect(liveDaemons(db)).toEqual([]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });

  it("tells the daemon when its lock's connection is lost, and other daemons then take it for dead", async () => {
    const { url, db } = await postgres.open();
    const holder = postgres.connect(url);
    let lost!: () => void;
    const heard = new Promise<void>((resolve) => (lost = resolve));
    const lease = DaemonLease.acquire(holder, { onLost: () => lost() });
    expect(lease.lost).toBe(false);
    // The server ends the backend that holds the lock (what a network cut or a server restart does).
    const terminated = db.query<{ done: boolean }>(
      `SELECT pg_terminate_backend(pid) AS done FROM pg_locks
       WHERE locktype = 'advisory' AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 2
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [LEASE_LOCK_SPACE, lease.id],
    );
    expect(terminated.rows).toEqual([{ done: true }]);
    await heard;
    expect(lease.lost).toBe(true);
    // The daemon hears of the loss as the server announces the end of the session, a moment
    // before that backend has exited and dropped its locks: the exit is waited for.
    await backendGone(db, lease.id);
    lease.release(); // the row goes; nothing to unlock
    expect(db.query("SELECT 1 FROM daemons").rowCount).toBe(0);
  });

  it("prunes the rows of daemons whose lease is gone when another daemon starts", async () => {
    const { db } = await postgres.open();
    db.query("INSERT INTO daemons (host, pid, started_ms) VALUES ('gone', 1, 0), ('just-starting', 2, $1)", [Date.now()]);
    const lease = DaemonLease.acquire(db);
    // The old row goes; a row inserted a moment ago may be a daemon that has not locked yet: kept.
    expect(db.query<{ host: string }>("SELECT host FROM daemons ORDER BY id").rows.map((row) => row.host)).toEqual([
      "just-starting",
      lease.record.host,
    ]);
    lease.release();
  });
});
