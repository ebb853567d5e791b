/**
 * Files that are not pi sessions: each is refused with import_failed saying what is wrong, quickly
 * and without reading more than the limits allow; nothing is left behind. A FIFO without a writer
 * must not hang the import (nor the thread pool), `/dev/zero` must not be read.
 */
import { execFileSync } from "node:child_process";
import { closeSync, openSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppError, CancelledError } from "../errors.js";
import { SessionStore } from "../store/index.js";
import { FakeCounter, sequentialIds } from "./fixtures/test-helpers.js";
import type { ImportLimits } from "./import.js";
import { SessionService } from "./service.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const header = '{"type":"session","version":3,"id":"odd","timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}';
const message = (id: string, parentId: string | null, content = id) =>
  JSON.stringify({ type: "message", id, parentId, timestamp: "2026-03-01T12:00:01.000Z", message: { role: "user", content } });

async function failure(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the import to fail");
}

describe("importing odd files", () => {
  let folder: string;
  let store: SessionStore;
  let sessions: SessionService;
  let limits: ImportLimits;

  beforeEach(() => {
    folder = dirs.make();
    limits = { maxImportLineBytes: 1 << 20, maxImportFileBytes: 64 << 20 };
    const ids = sequentialIds();
    store = new SessionStore({ path: join(folder, "odd.db"), ids, checkpoints: "sqlite" });
    sessions = new SessionService(store, new FakeCounter(), { ids, import: { batchSize: 2, limits: () => limits } });
  });
  afterEach(async () => {
    await store.close();
    dirs.remove(folder);
  });

  const importPath = (path: string, signal?: AbortSignal) => sessions.import({ format: "pi-jsonl", path }, { signal });
  const expectFailure = async (path: string, pattern: RegExp) => {
    const error = await failure(() => importPath(path));
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("import_failed");
    expect(error.message).toMatch(pattern);
    expect((await sessions.list({})).sessions).toEqual([]);
    expect(store.reclaimAbandonedImports()).toBe(0);
  };

  it("refuses /dev/zero as a character device without reading it", async () => {
    await expectFailure("/dev/zero", /character device, not a regular file/);
  });

  it("refuses a FIFO with no writer at once instead of waiting for one", async () => {
    const fifo = join(folder, "pipe.jsonl");
    execFileSync("mkfifo", [fifo]);
    await expectFailure(fifo, /FIFO \(named pipe\), not a regular file/);
  });

  it("refuses a folder", async () => {
    await expectFailure(folder, /is a folder, not a regular file/);
  });

  it("calls a sparse file (all NUL bytes) binary, not empty", async () => {
    const sparse = join(folder, "sparse.jsonl");
    closeSync(openSync(sparse, "w"));
    truncateSync(sparse, 32 << 20);
    await expectFailure(sparse, /binary, not a pi session file \(a NUL byte on line 1/);
  });

  it("calls a binary file binary, naming the line of its first NUL byte", async () => {
    const binary = join(folder, "image.jsonl");
    writeFileSync(binary, Buffer.concat([Buffer.from("GIF89a\nline two\n"), Buffer.from([0, 1, 2, 255])]));
    await expectFailure(binary, /binary.*line 3/);
  });

  it("says a text file without a header (like /etc/passwd) is not a session file", async () => {
    const passwd = join(folder, "passwd");
    writeFileSync(passwd, "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n");
    await expectFailure(passwd, /not a pi session file: none of its 2 non-blank lines is a session header .*\(line 1: invalid JSON/);
    const empty = join(folder, "empty.jsonl");
    writeFileSync(empty, "\n\n");
    await expectFailure(empty, /the file is empty/);
  });

  it("refuses a file over limits.maxImportFileBytes before reading it", async () => {
    const big = join(folder, "big.jsonl");
    writeFileSync(big, `${header}\n${message("a", null)}\n`);
    limits.maxImportFileBytes = 100;
    await expectFailure(big, /more than limits\.maxImportFileBytes \(100\)/);
  });

  it("skips a line over limits.maxImportLineBytes like a line that cannot be read: reported, bridged over, the rest imported", async () => {
    const long = join(folder, "long.jsonl");
    limits.maxImportLineBytes = 1000;
    // A chunk is 1 MiB: the long line also crosses chunk boundaries, which must not keep its bytes.
    const huge = "x".repeat(3 << 20);
    writeFileSync(long, `${header}\n${message("a", null)}\n${message("big", "a", huge)}\n${message("c", "big")}\n${message("d", "c")}\n`);
    const result = await importPath(long);
    expect(result.skippedLines).toEqual([
      {
        line: 3,
        reason: expect.stringMatching(/^longer than limits\.maxImportLineBytes \(3145\d{3} bytes, the limit is 1000\): not read; bridged: its child \(line 4\) was attached to "a"/),
        bridgedTo: "a",
      },
    ]);
    expect((await sessions.getCountedPath(result.session.id)).map((counted) => counted.entry.id)).toEqual(["a", "c", "d"]);
    // The last line, unterminated and too long: skipped too; what came before is imported.
    writeFileSync(long, `${header.replace('"odd"', '"odd2"')}\n${message("a", null)}\n${"{".repeat(5000)}`);
    const cut = await importPath(long);
    expect(cut.skippedLines).toEqual([{ line: 3, reason: expect.stringMatching(/^longer than limits\.maxImportLineBytes \(5000 bytes/) }]);
    expect(cut.entryCount).toBe(1);
  });

  it("stops at a cancellation between batches and removes what it wrote", async () => {
    const file = join(folder, "many.jsonl");
    const lines = [header];
    for (let i = 0; i < 20; i++) lines.push(message(`e${i}`, i === 0 ? null : `e${i - 1}`));
    writeFileSync(file, lines.join("\n"));
    const controller = new AbortController();
    const beginImport = store.beginImport.bind(store);
    store.beginImport = (session) => {
      const target = beginImport(session);
      const insert = target.insertBatch.bind(target);
      let batches = 0;
      target.insertBatch = (batch) => {
        if (++batches === 2) controller.abort(new CancelledError());
        return insert(batch);
      };
      return target;
    };
    const error = await failure(() => importPath(file, controller.signal));
    expect(error).toBeInstanceOf(CancelledError);
    expect(store.getSession("odd")).toBeUndefined();
    expect(store.hasEntry("odd", "e0")).toBe(false);
  });

  it("reports a parent cycle (a ↔ b) in skippedLines instead of silently making a root", async () => {
    const file = join(folder, "cycle.jsonl");
    writeFileSync(file, [header, message("a", "b"), message("b", "a"), message("c", "missing")].join("\n"));
    const result = await importPath(file);
    expect(result.entryCount).toBe(3);
    expect(result.skippedLines).toEqual([
      { line: 2, reason: expect.stringMatching(/parent "b" of entry "a" comes later in the file \(a parent cycle/) },
    ]);
  });
});
