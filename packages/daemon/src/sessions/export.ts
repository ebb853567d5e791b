/**
 * `session/export` as pi JSONL: the header line, then every entry in insertion order exactly as
 * stored (so exporting twice gives the same bytes), except that a prune entry is written as the
 * `custom` entry pi reads (pi-format.ts). To a path it streams page by page into a
 * temporary file renamed into place, so a failed export never leaves a truncated file behind.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { once } from "node:events";
import { AppError } from "../errors.js";
import type { SessionStore } from "../store/index.js";
import { exportLine, headerLine } from "./pi-format.js";

/** Entries per page read while streaming to a file: bounds memory even with megabyte-sized entries. */
const EXPORT_PAGE_SIZE = 128;

export async function exportToPath(store: SessionStore, sessionId: string, path: string): Promise<void> {
  const session = store.requireSession(sessionId);
  const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  const out = createWriteStream(temporary, { encoding: "utf8" });
  let streamError: Error | undefined;
  out.on("error", (error) => (streamError = error));
  try {
    await writeChunk(out, `${headerLine(session)}\n`);
    for (const page of store.entryJsonPages(sessionId, EXPORT_PAGE_SIZE)) {
      if (streamError) throw streamError;
      await writeChunk(out, `${page.map(exportLine).join("\n")}\n`);
    }
    out.end();
    await once(out, "finish");
    if (streamError) throw streamError;
    await rename(temporary, path);
  } catch (error) {
    out.destroy();
    await rm(temporary, { force: true });
    throw new AppError("export_failed", `could not export session "${sessionId}" to ${path}: ${(error as Error).message}`, {
      sessionId,
      path,
    });
  }
}

export function exportToString(store: SessionStore, sessionId: string): string {
  const session = store.requireSession(sessionId);
  const parts = [`${headerLine(session)}\n`];
  try {
    for (const page of store.entryJsonPages(sessionId)) parts.push(`${page.map(exportLine).join("\n")}\n`);
    return parts.join("");
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
