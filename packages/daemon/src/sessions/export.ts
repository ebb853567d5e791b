/**
 * `session/export` as pi JSONL: the header line, then every entry exactly as stored, in insertion
 * order unless the current leaf must be moved to the end (export-order.ts), except that a prune
 * entry is written as the `custom` entry pi reads (formats/pi/lines.ts). To a path it streams page by page into a
 * temporary file renamed into place, so a failed export never leaves a truncated file behind.
 */
import { createWriteStream } from "node:fs";
import { dirname } from "node:path";
import { once } from "node:events";
import { AppError } from "../errors.js";
import type { SessionStore } from "../store/index.js";
import { exportOrder } from "./export-order.js";
import { exportLine, headerLine } from "./formats/pi/lines.js";

/** Entries per page read while streaming to a file: bounds memory even with megabyte-sized entries. */
const EXPORT_PAGE_SIZE = 128;

/** What an export says besides the file (see export-order.ts). */
export interface ExportNote {
  warning?: string;
}

/** The entries' JSON pages in the order they are written, and the warning that goes with it. */
function plannedPages(
  store: SessionStore,
  sessionId: string,
  leafId: string | null,
  pageSize?: number,
): { pages: Iterable<string[]>; note: ExportNote } {
  const plan = exportOrder(store.entryLinks(sessionId), leafId);
  const pages = plan.order ? store.entryJsonBySeq(sessionId, plan.order, pageSize) : store.entryJsonPages(sessionId, pageSize);
  return { pages, note: plan.warning !== undefined ? { warning: plan.warning } : {} };
}

export async function exportToPath(store: SessionStore, sessionId: string, path: string): Promise<ExportNote> {
  const session = store.requireSession(sessionId);
  const { pages, note } = plannedPages(store, sessionId, session.leafId, EXPORT_PAGE_SIZE);
  const temporary = `${path}.${Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(4))).toString("hex")}.tmp`;
  // Loaded here: otherwise every daemon's start would load node:fs/promises for exports.
  const { rename, rm } = await import("node:fs/promises");
  const out = createWriteStream(temporary, { encoding: "utf8" });
  let streamError: Error | undefined;
  out.on("error", (error) => (streamError = error));
  try {
    await writeChunk(out, `${headerLine(session)}\n`);
    for (const page of pages) {
      if (streamError) throw streamError;
      await writeChunk(out, `${page.map(exportLine).join("\n")}\n`);
    }
    out.end();
    await once(out, "finish");
    if (streamError) throw streamError;
    await rename(temporary, path);
    return note;
  } catch (error) {
    out.destroy();
    await rm(temporary, { force: true });
    throw new AppError("export_failed", `could not export session "${sessionId}" to ${path}: ${whyNotWritten(error, path)}`, {
      sessionId,
      path,
    });
  }
}

/**
 * Why the file could not be written, about the file asked for: the system's message names the
 * temporary file written beside it, which the user never asked for and which no longer exists.
 */
function whyNotWritten(error: unknown, path: string): string {
  const folder = dirname(path);
  switch ((error as NodeJS.ErrnoException).code) {
    case "ENOENT":
      return `its folder ${folder} does not exist`;
    case "ENOTDIR":
      return `${folder} is not a folder`;
    case "EACCES":
    case "EPERM":
      return `no permission to write in ${folder}`;
    case "EISDIR":
      return `${path} is a folder`;
    case "EROFS":
      return `${folder} is on a read-only file system`;
    case "ENOSPC":
      return `no space left on the device of ${folder}`;
    default:
      return (error as Error).message;
  }
}

export function exportToString(store: SessionStore, sessionId: string): { content: string } & ExportNote {
  const session = store.requireSession(sessionId);
  const { pages, note } = plannedPages(store, sessionId, session.leafId);
  const parts = [`${headerLine(session)}\n`];
  try {
    for (const page of pages) parts.push(`${page.map(exportLine).join("\n")}\n`);
    return { content: parts.join(""), ...note };
  } catch (error) {
    if (error instanceof RangeError) {
      throw new AppError("export_failed", `session "${sessionId}" is too large to return as content; export it to a path`, {
        sessionId,
      });
    }
    throw error;
  }
}

/** Writes respecting backpressure, so memory stays flat however large the session is. */
async function writeChunk(out: NodeJS.WritableStream, chunk: string): Promise<void> {
  if (!out.write(chunk)) await once(out, "drain");
}
