/**
 * A daemon's identity on PostgreSQL, valid across hosts: a pid means nothing on another machine,
 * so the owner of a job or an import is a lease. Taking one inserts a row in `daemons` (host,
 * pid, start time: what status and logs show) and takes a session-level advisory lock keyed by
 * the row's id on a connection held for the daemon's life. The lease is alive exactly while that
 * lock is held: when the daemon dies (SIGKILL, crash, lost host) its connection closes, the
 * server drops the lock once it finds the connection closed, and from then on every daemon sees its
 * jobs and half-imports as abandoned.
 *
 * The lease travels in the existing owner model (store/owner.ts): the owner's `pid` is the
 * daemon's pid, its `start` names the lease (`pg-lease:<id>`), and `leaseProbe` answers whether
 * such an owner is alive.
 */
import { hostname } from "node:os";
import { isOwnerAlive, systemProbe, type OwnerProbe, type ProcessOwner } from "../owner.js";
import { MIGRATION_LOCK_SPACE } from "./schema.js";

/** Key space (first key of the two-key advisory lock) of leases; the second key is the lease id. */
export const LEASE_LOCK_SPACE = MIGRATION_LOCK_SPACE + 1;

/** What the lease reads and writes on the shared pool (`SyncPostgres` has it). */
export interface LeaseDatabase {
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[], name?: string): { rows: Row[]; rowCount: number };
}

/**
 * What a lease holds its lock with: session-level advisory locks on a connection that stays open
 * while they are held (`SyncPostgres.tryLockSession`), and word when that connection is lost.
 */
export interface LeaseConnection extends LeaseDatabase {
  tryLockSession(space: number, key: number): boolean;
  unlockSession(space: number, key: number): boolean;
  onSessionLocksLost(listener: () => void): { dispose(): void };
}

const OWNER_PREFIX = "pg-lease:";
/** Rows of daemons whose lock is gone are removed once this old (a row is inserted just before its lock is taken). */
const PRUNE_AFTER_MS = 60_000;

const INSERT_DAEMON = "INSERT INTO daemons (host, pid, started_ms) VALUES ($1, $2, $3) RETURNING id";
const HELD = `
  SELECT l.objid::bigint AS id FROM pg_locks l
  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = $1::bigint::oid
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
const IS_HELD = `SELECT EXISTS (${HELD} AND l.objid = $2::bigint::oid) AS alive`;
const PRUNE = `DELETE FROM daemons WHERE started_ms < $2 AND id NOT IN (${HELD})`;
const DELETE_DAEMON = "DELETE FROM daemons WHERE id = $1";

/** The lease id an owner names, or undefined for a process owner (pid + start identity). */
export function leaseIdOf(owner: ProcessOwner): number | undefined {
  if (owner.start === null || !owner.start.startsWith(OWNER_PREFIX)) return undefined;
  const id = Number(owner.start.slice(OWNER_PREFIX.length));
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** The owner of what a lease's daemon runs. */
export function leaseOwner(id: number, pid: number = process.pid): ProcessOwner {
  return { pid, start: `${OWNER_PREFIX}${id}` };
}

/** True while the daemon of lease `id` holds its lock (on any host). */
export function isLeaseAlive(db: LeaseDatabase, id: number): boolean {
  return db.query<{ alive: boolean }>(IS_HELD, [LEASE_LOCK_SPACE, id]).rows[0]?.alive === true;
}

/**
 * An OwnerProbe for a PostgreSQL store: an owner that names a lease is alive while the lease is
 * held; an owner without one (a job copied from a SQLite file) is probed as a process of this
 * host by `fallback`.
 */
export function leaseProbe(db: LeaseDatabase, fallback: OwnerProbe = systemProbe): OwnerProbe {
  return {
    exists: (pid) => fallback.exists(pid),
    startOf: (pid) => fallback.startOf(pid),
    isAlive(owner) {
      const id = leaseIdOf(owner);
      return id === undefined ? isOwnerAlive(owner, fallback) : isLeaseAlive(db, id);
    },
  };
}

export interface LeaseRecord {
  id: number;
  host: string;
  pid: number;
  startedMs: number;
}

export class DaemonLease {
  private released = false;
  private lostConnection = false;
  private readonly lossWatch: { dispose(): void };

  private constructor(
    private readonly db: LeaseConnection,
    readonly record: LeaseRecord,
    onLost: (() => void) | undefined,
  ) {
    this.lossWatch = db.onSessionLocksLost(() => {
      if (this.released) return;
      this.lostConnection = true;
      onLost?.();
    });
  }

  /**
   * Takes a new lease: a `daemons` row, then its lock on the connection `db` keeps for session
   * locks (open for the daemon's life). Rows of daemons that are gone are pruned on the way.
   * `onLost` hears when the lock's connection breaks: other daemons then take this one for dead.
   */
  static acquire(
    db: LeaseConnection,
    options: { host?: string; pid?: number; nowMs?: number; onLost?: () => void } = {},
  ): DaemonLease {
    const record = {
      host: options.host ?? hostname(),
      pid: options.pid ?? process.pid,
      startedMs: options.nowMs ?? Date.now(),
    };
    const id = Number(db.query<{ id: number }>(INSERT_DAEMON, [record.host, record.pid, record.startedMs]).rows[0]!.id);
    if (!Number.isSafeInteger(id) || id > 0x7fff_ffff) throw new Error(`daemon lease id ${id} is beyond the advisory lock's key range`);
    if (!db.tryLockSession(LEASE_LOCK_SPACE, id)) {
      db.query(DELETE_DAEMON, [id]);
      throw new Error(`the lock of daemon lease ${id} is held by another connection`);
    }
    db.query(PRUNE, [LEASE_LOCK_SPACE, record.startedMs - PRUNE_AFTER_MS]);
    return new DaemonLease(db, { id, ...record }, options.onLost);
  }

  get id(): number {
    return this.record.id;
  }

  /** The owner recorded on the jobs and imports this daemon runs. */
  get owner(): ProcessOwner {
    return leaseOwner(this.record.id, this.record.pid);
  }

  /** True once the lock's connection broke: the lease is over although this daemon runs on. */
  get lost(): boolean {
    return this.lostConnection;
  }

  /** Ends the lease (at shutdown): its row goes, and whatever it still owned is abandoned. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.lossWatch.dispose();
    if (!this.lostConnection) this.db.unlockSession(LEASE_LOCK_SPACE, this.record.id);
    this.db.query(DELETE_DAEMON, [this.record.id]);
  }
}
