/**
 * A first-come, first-served queue in front of SQLite's write lock, for daemon processes that
 * share one database file (docs/storage.md, "Several daemons on one file").
 *
 * SQLite offers no queue: a writer that finds the lock taken can only try again later. Polling
 * is unfair: with four processes appending, the lock is held about 70 % of the time, so a
 * waiter's retry often finds it taken again by a writer that arrived after it; 1 % of the
 * appends lost ten to twenty retries in a row and waited 20–70 ms for a lock that each holder
 * keeps for half a millisecond.
 *
 * The gate is a named pipe next to the database (`<database>-gate`, mode 0600) holding one
 * token byte. A writer reads the byte before BEGIN IMMEDIATE and writes it back after COMMIT
 * or ROLLBACK. Linux wakes the readers blocked on a pipe one at a time, in the order they
 * started waiting, so writers sleep in the kernel and take the lock in turn; the one releasing
 * it hands it straight to the next, which finds SQLite's lock free at once.
 *
 * The gate only orders writers; SQLite's lock stays the exclusion, and nothing depends on the
 * token being right:
 * - A token lost with its holder (a process killed between reading and writing it back) is
 *   made again: a watchdog thread writes a token into the pipe for a wait that lasts (25 to
 *   `WATCHDOG_MS` ms), so no wait on the gate outlasts that for long. A writer let in that way
 *   (or by a duplicate token) simply polls for SQLite's lock as before.
 * - Extra tokens (from the watchdog, or from a writer that seeded the pipe) are read back and
 *   dropped by whoever holds SQLite's write lock: inside the lock this process is the only
 *   writer, so any token found in the pipe is one too many. One is written after every
 *   transaction, so the count settles back to one.
 * - The pipe's content disappears when no process has it open; the first transaction of a
 *   process that finds it empty goes ahead without a token and writes one afterwards.
 * - The pipe is made (with the `mkfifo` program) only once two writers have met, so a lone
 *   daemon never spawns it. Where it cannot be made or is not a pipe of this user's, or off
 *   Linux (the order in which other systems wake pipe readers is not FIFO), there is no gate
 *   and writers poll.
 *
 * Reading the token blocks the thread, as waiting for SQLite's lock always did (better-sqlite3
 * is synchronous). The watchdog is a worker thread started by the first writer that finds the
 * pipe empty (a process that never waits never starts it).
 */
import { closeSync, constants, lstatSync, openSync, readSync, writeSync } from "node:fs";
import type { Worker } from "node:worker_threads";
import { childProcess, workerThreads } from "../lazy-node.js";
import { log } from "../log.js";

/** A writer waiting on the gate has a token made within this long (the one in use may be lost). */
export const WATCHDOG_MS = 50;

/** Slots of the word array the waiting thread and the watchdog share. */
const WAITING = 0; // id of the wait in progress, 0 when none
const STOP = 1; // set when the gate closes
const READY = 2; // set by the watchdog once it runs
const MADE = 3; // tokens the watchdog made
const PARKED = 4; // set by the watchdog while it sleeps until the next wait

/**
 * The watchdog looks at the wait in progress every half `timeoutMs`, and makes a token when it
 * sees the same wait twice. It does not need to be told about each wait (that would cost a thread
 * wake-up per wait): only when it has parked itself, after a second without waits, does the next
 * wait wake it. It blocks in Atomics.wait only, never in I/O, so that terminating the thread or
 * the process is never held up.
 */
const watchdogSource = `
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
const shared = new Int32Array(workerData.shared);
const fd = fs.openSync(workerData.path, fs.constants.O_RDWR | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
const token = Buffer.from([1]);
const tick = Math.max(1, Math.floor(workerData.timeoutMs / 2));
const idleTicksBeforeParking = Math.ceil(1000 / tick);
let seen = 0;
let idleTicks = 0;
Atomics.store(shared, ${READY}, 1);
while (Atomics.load(shared, ${STOP}) === 0) {
  const waiting = Atomics.load(shared, ${WAITING});
  if (waiting !== 0) {
    idleTicks = 0;
    if (waiting !== seen) seen = waiting;
    else {
      seen = 0;
      // Counted first, so that whoever reads the token finds it counted.
      Atomics.add(shared, ${MADE}, 1);
      try { fs.writeSync(fd, token); } catch { Atomics.sub(shared, ${MADE}, 1); }
    }
  } else if (++idleTicks >= idleTicksBeforeParking) {
    // Parked, then the wait slot read again: a waiter either sees PARKED and wakes this thread,
    // or stored its wait before the read below.
    Atomics.store(shared, ${PARKED}, 1);
    if (Atomics.load(shared, ${WAITING}) === 0 && Atomics.load(shared, ${STOP}) === 0) Atomics.wait(shared, ${PARKED}, 1);
    Atomics.store(shared, ${PARKED}, 0);
    idleTicks = 0;
    seen = 0;
    continue;
  }
  Atomics.wait(shared, ${STOP}, 0, tick);
}
fs.closeSync(fd);
`;

export interface WriterGateStats {
  /** Transactions that found the token in the pipe at once. */
  free: number;
  /** Transactions that queued for it (slept until another writer handed it over). */
  queued: number;
  /** Tokens the watchdog made for waits that lasted (see `WATCHDOG_MS`). */
  made: number;
  /** Extra tokens dropped by writers holding SQLite's lock. */
  dropped: number;
}

export interface WriterGate {
  /**
   * Before BEGIN IMMEDIATE: takes the token, sleeping until it is handed over when another writer
   * has it. True when it slept.
   */
  enter(): boolean;
  /** BEGIN IMMEDIATE found another writer: the first time, makes the pipe if there is none. */
  noteContention(): void;
  /** Inside SQLite's write lock: drops the tokens beyond the one this writer holds. */
  dropExtraTokens(): void;
  /** After the transaction ended (or never began): puts one token back. */
  leave(): void;
  close(): void;
  readonly stats: Readonly<WriterGateStats>;
  /**
   * The watchdog: "off" until the first writer that finds the pipe empty starts it, "watching"
   * while writers wait, "parked" after a second without waits (the next wait wakes it).
   */
  readonly watchdog: "off" | "starting" | "watching" | "parked";
}

export interface WriterGateOptions {
  /** Makes the pipe (default: the `mkfifo` program). Tests pass one that fails. */
  makeFifo?: (path: string) => void;
  /** A wait has a token made within this long (default `WATCHDOG_MS`). */
  watchdogMs?: number;
}

/** The gate of the database at `databasePath`, or undefined where there is none (see above). */
export function createWriterGate(databasePath: string, options: WriterGateOptions = {}): WriterGate | undefined {
  if (process.platform !== "linux" || databasePath === ":memory:" || databasePath === "") return undefined;
  return new FifoWriterGate(`${databasePath}-gate`, options.makeFifo ?? mkfifo, options.watchdogMs ?? WATCHDOG_MS);
}

function mkfifo(path: string): void {
  const made = childProcess().spawnSync("mkfifo", ["-m", "600", "--", path], { stdio: "ignore", timeout: 5000 });
  if (made.error) throw made.error;
}

class FifoWriterGate implements WriterGate {
  /** "closed": not looked for yet; "absent": no pipe until two writers meet; "failed": no gate for good. */
  private state: "closed" | "absent" | "open" | "failed" = "closed";
  private blocking = -1;
  private nonBlocking = -1;
  private madeOnce = false;
  private readonly byte = Buffer.alloc(64);
  private readonly token = Buffer.from([1]);
  private readonly shared = new Int32Array(new SharedArrayBuffer(5 * Int32Array.BYTES_PER_ELEMENT));
  private worker: Worker | undefined;
  private watchdogGone = false;
  private waitId = 0;
  private readonly counts = { free: 0, queued: 0, dropped: 0 };

  constructor(
    private readonly path: string,
    private readonly makeFifo: (path: string) => void,
    private readonly watchdogMs: number,
  ) {}

  get stats(): WriterGateStats {
    return { ...this.counts, made: Atomics.load(this.shared, MADE) };
  }

  get watchdog(): WriterGate["watchdog"] {
    if (this.worker === undefined) return "off";
    if (Atomics.load(this.shared, READY) === 0) return "starting";
    return Atomics.load(this.shared, PARKED) === 1 ? "parked" : "watching";
  }

  enter(): boolean {
    if (this.state === "closed") this.open();
    if (this.state !== "open") return false;
    if (this.takeNow()) {
      this.counts.free++;
      return false;
    }
    // Without a watchdog running, a lost token could keep this thread asleep: go ahead without
    // one (this transaction polls, and writes a token after it) and start the watchdog.
    if (!this.watchdogReady()) return false;
    this.waitId = (this.waitId % 0x7fff_ffff) + 1;
    Atomics.store(this.shared, WAITING, this.waitId);
    if (Atomics.load(this.shared, PARKED) === 1) {
      Atomics.store(this.shared, PARKED, 0);
      Atomics.notify(this.shared, PARKED);
    }
    try {
      readSync(this.blocking, this.byte, 0, 1, null);
      this.counts.queued++;
    } catch (error) {
      // Interrupted by a signal: go on without the token (the extra one written after is dropped
      // later). Anything else is not expected from a pipe this process holds open for writing:
      // give up on the gate rather than loop.
      if ((error as NodeJS.ErrnoException).code !== "EINTR") this.fail(error);
    } finally {
      Atomics.store(this.shared, WAITING, 0);
    }
    return true;
  }

  noteContention(): void {
    if (this.state !== "absent" || this.madeOnce) return;
    this.madeOnce = true;
    try {
      this.makeFifo(this.path);
    } catch (error) {
      // Another process may have made it a moment ago: open() below tells.
      log("debug", `writer gate: making ${this.path}: ${(error as Error).message}`);
    }
    this.open();
  }

  dropExtraTokens(): void {
    if (this.state !== "open") return;
    for (;;) {
      const read = this.readNow(this.byte.length);
      this.counts.dropped += read;
      if (read < this.byte.length) return;
    }
  }

  leave(): void {
    if (this.state !== "open") return;
    try {
      writeSync(this.nonBlocking, this.token);
    } catch (error) {
      // EAGAIN: the pipe is full of tokens, which is more than enough.
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") this.fail(error);
    }
  }

  close(): void {
    this.stopWatchdog();
    this.worker = undefined;
    this.closeFds();
    if (this.state === "open") this.state = "failed";
  }

  private open(): void {
    let stats;
    try {
      stats = lstatSync(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") this.state = "absent";
      else this.fail(error);
      return;
    }
    const uid = process.getuid?.();
    if (!stats.isFIFO() || (uid !== undefined && stats.uid !== uid) || (stats.mode & 0o077) !== 0) {
      this.fail(new Error("not a named pipe of this user's, private to them"));
      return;
    }
    try {
      // O_RDWR: opening a pipe for reading alone would wait for a writer, and this process writes tokens too.
      this.blocking = openSync(this.path, constants.O_RDWR | constants.O_NOFOLLOW);
      this.nonBlocking = openSync(this.path, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOFOLLOW);
      this.state = "open";
    } catch (error) {
      this.fail(error);
    }
  }

  private takeNow(): boolean {
    return this.readNow(1) === 1;
  }

  /** Reads up to `length` tokens without waiting; 0 when the pipe is empty. */
  private readNow(length: number): number {
    try {
      return readSync(this.nonBlocking, this.byte, 0, length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") this.fail(error);
      return 0;
    }
  }

  private watchdogReady(): boolean {
    const state = this.watchdog;
    if (state === "watching" || state === "parked") return true;
    if (this.worker === undefined && !this.watchdogGone) this.startWatchdog();
    return false;
  }

  private startWatchdog(): void {
    const worker = new (workerThreads().Worker)(watchdogSource, {
      eval: true,
      workerData: { shared: this.shared.buffer, path: this.path, timeoutMs: this.watchdogMs },
      stdout: true,
      stderr: true,
    });
    worker.unref();
    const gone = (reason: string) => {
      // Without its watchdog the gate could leave a writer asleep for good: no gate from here on.
      this.watchdogGone = true;
      if (this.worker === worker) {
        this.worker = undefined;
        Atomics.store(this.shared, READY, 0);
        if (this.state === "open") this.fail(new Error(reason));
      }
    };
    worker.on("error", (error) => gone(`watchdog failed: ${error.message}`));
    worker.on("exit", (code) => gone(`watchdog exited with code ${code}`));
    this.worker = worker;
  }

  private fail(error: unknown): void {
    log("debug", `writer gate at ${this.path} not used: ${(error as Error).message ?? String(error)}; writers poll for the lock`);
    this.state = "failed";
    this.stopWatchdog();
    this.closeFds();
  }

  private stopWatchdog(): void {
    Atomics.store(this.shared, STOP, 1);
    Atomics.store(this.shared, PARKED, 0);
    Atomics.notify(this.shared, PARKED);
    Atomics.notify(this.shared, STOP);
  }

  private closeFds(): void {
    for (const fd of [this.blocking, this.nonBlocking]) {
      if (fd < 0) continue;
      try {
        closeSync(fd);
      } catch {
        // Closing is all that is left to do.
      }
    }
    this.blocking = this.nonBlocking = -1;
  }
}
