/**
 * The checkpointer's thread (checkpointer.ts says why it exists): its own connection to the
 * database runs PASSIVE checkpoints shortly after writes, and merges the search index in small
 * steps once the database has been idle. Started by `WalCheckpointer` through the one worker
 * entry (workers/start-worker.ts); reports in messages, never by printing.
 */
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";
import { MERGE_PAGES, MERGE_PAUSE_MS, type CheckpointerData, type DoneMessage, type ToCheckpointer } from "./checkpointer-messages.js";

const port = parentPort!;
const { databasePath, delayMs, mergeIdleMs } = workerData as CheckpointerData;
const db = new Database(databasePath, { fileMustExist: true });
const hasIndex = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'entries_fts_config'").get() !== undefined;
const dataVersion = db.prepare("PRAGMA data_version").pluck();
const totalChanges = db.prepare("SELECT total_changes()").pluck();
const merge = hasIndex ? db.prepare(`INSERT INTO entries_fts (entries_fts, rank) VALUES ('merge', ${MERGE_PAGES})`) : undefined;
let timer: NodeJS.Timeout | undefined;
let mergeTimer: NodeJS.Timeout | undefined;
let seenVersion: unknown;
let merged = 0;

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function report(of: DoneMessage["of"], error?: string): void {
  port.postMessage({ t: "done", of, merged, ...(error !== undefined ? { error } : {}) } satisfies DoneMessage);
  merged = 0;
}

function automergeOff(): void {
  if (!hasIndex) return;
  const current = db.prepare("SELECT v FROM entries_fts_config WHERE k = 'automerge'").pluck().get();
  if (current !== 0) db.prepare("INSERT INTO entries_fts (entries_fts, rank) VALUES ('automerge', 0)").run();
}

function checkpoint(): void {
  timer = undefined;
  let error: string | undefined;
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (caught) {
    error = messageOf(caught);
  }
  report("checkpoint", error);
  waitForIdle();
}

function waitForIdle(): void {
  if (merge === undefined) return;
  if (mergeTimer !== undefined) clearTimeout(mergeTimer);
  seenVersion = dataVersion.get();
  mergeTimer = setTimeout(mergeStep, mergeIdleMs);
}

/** One step while nobody wrote since the last look; on until a step finds nothing to merge. */
function mergeStep(): void {
  mergeTimer = undefined;
  let error: string | undefined;
  try {
    const version = dataVersion.get();
    if (version !== seenVersion) return waitForIdle();
    const before = totalChanges.get() as number;
    merge!.run();
    // The 'merge' command changes fewer than two rows when it found nothing to merge.
    if ((totalChanges.get() as number) - before >= 2) {
      merged++;
      seenVersion = version;
      mergeTimer = setTimeout(mergeStep, MERGE_PAUSE_MS);
      return;
    }
    if (merged === 0) return;
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (caught) {
    error = messageOf(caught);
  }
  report("merge", error);
}

try {
  automergeOff();
} catch (caught) {
  report("merge", `turning off the search index's automerge: ${messageOf(caught)}`);
}

port.on("message", (message: ToCheckpointer) => {
  if (message.t === "write") {
    if (mergeTimer !== undefined) clearTimeout(mergeTimer);
    mergeTimer = undefined;
    timer ??= setTimeout(checkpoint, delayMs);
  } else if (message.t === "close") {
    clearTimeout(timer);
    clearTimeout(mergeTimer);
    db.close();
    port.close();
  }
});
