/**
 * Odd files given to `session/import` and to the CLI's `import` and `compact <file>`: /dev/zero,
 * a FIFO nobody writes to, a 2 GB sparse file, a binary file, /etc/passwd-like text and a file
 * whose entries name each other as parents. Each is refused with import_failed saying what is
 * wrong (the cycle is imported and reported in skippedLines), at once and with memory to spare,
 * and the daemon goes on answering: an export asked for while a FIFO import is refused is not held up.
 */
import { EntryAppend, SessionCreate, SessionExport, SessionImport, SessionList } from "@base-context/protocol";
import { execFileSync } from "node:child_process";
import { closeSync, openSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useDaemon } from "../support/daemon.js";
import { runCli } from "../support/run-cli.js";
import { tempDirs } from "../support/temp-dir.js";
import { recordScore } from "./scoreboard.js";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
const d = useDaemon();

const header = (id: string) => JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-03-01T12:00:00.000Z", cwd: "/odd" });
const message = (id: string, parentId: string | null) =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-03-01T12:00:01.000Z",
    message: { role: "user", content: id, timestamp: 1 },
  });

/** The odd files, made in a fresh folder: name → [path, what the refusal must say]. */
/** Each odd file: scenario, path, what session/import says, what the CLI says (its own wording, cli/messages.ts). */
function oddFiles(): [string, string, RegExp, RegExp][] {
  const folder = dirs.make("bc-odd-files-");
  const fifo = join(folder, "pipe.jsonl");
  execFileSync("mkfifo", [fifo]);
  const sparse = join(folder, "sparse.jsonl");
  closeSync(openSync(sparse, "w"));
  truncateSync(sparse, 2 * 10 ** 9);
  const binary = join(folder, "binary.jsonl");
  writeFileSync(binary, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)));
  const passwd = join(folder, "passwd");
  writeFileSync(passwd, "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
  return [
    ["/dev/zero", "/dev/zero", /character device, not a regular file/, /is not a regular file/],
    ["FIFO without a writer", fifo, /FIFO \(named pipe\), not a regular file/, /is not a regular file/],
    ["2 GB sparse file", sparse, /binary, not a pi session file/, /is not a pi session file: it is a binary file/],
    ["binary file", binary, /binary, not a pi session file/, /is not a pi session file: it is a binary file/],
    [
      "/etc/passwd-like text",
      passwd,
      /not a pi session file: none of its 2 non-blank lines is a session header/,
      /is not a pi session file/,
    ],
  ];
}

async function importError(path: string): Promise<{ code?: string; message: string }> {
  try {
    await d.client.request(SessionImport, { format: "pi-jsonl", path });
  } catch (error) {
    const { message, data } = error as { message: string; data?: { code?: string } };
    return { code: data?.code, message };
  }
  throw new Error(`importing ${path} succeeded`);
}

describe("odd files", { timeout: 60_000 }, () => {
  it("session/import refuses each with import_failed saying what is wrong, and the daemon goes on", async () => {
    const { session } = await d.client.request(SessionCreate, { cwd: "/odd/bystander" });
    await d.client.request(EntryAppend, {
      sessionId: session.id,
      entry: { type: "message", message: { role: "user", content: "still here", timestamp: 1 } },
    });
    for (const [scenario, path, says] of oddFiles()) {
      // An unrelated export in flight at the same time must be answered too.
      const [error, exported] = await Promise.all([
        importError(path),
        d.client.request(SessionExport, { sessionId: session.id, format: "pi-jsonl" }),
      ]);
      const answered = (await d.client.request(SessionList, {})).sessions.length === 1;
      const survived = error.code === "import_failed" && says.test(error.message) && exported.content!.includes("still here") && answered;
      recordScore({
        area: "odd files",
        scenario: `session/import: ${scenario}`,
        tried: 1,
        survived: survived ? 1 : 0,
        lost: answered ? 0 : 1,
      });
      expect(error.code).toBe("import_failed");
      expect(error.message).toMatch(says);
      expect(answered).toBe(true);
    }
    // Nothing was read into memory: /dev/zero once took 6 GB, the sparse file 4.1 GB.
    const peakKiB = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${d.process.pid}/status`, "utf8"))?.[1]);
    expect(peakKiB / 1024).toBeLessThan(400);
  });

  it("session/import takes a parent cycle (a ↔ b) in and reports it in skippedLines", async () => {
    const file = join(dirs.make("bc-odd-cycle-"), "cycle.jsonl");
    writeFileSync(file, [header("odd-cycle"), message("a", "b"), message("b", "a")].join("\n"));
    const result = await d.client.request(SessionImport, { format: "pi-jsonl", path: file });
    const reported =
      result.skippedLines?.some((skip) => skip.line === 2 && /comes later in the file \(a parent cycle/.test(skip.reason)) ?? false;
    recordScore({ area: "odd files", scenario: "session/import: parent cycle a ↔ b", tried: 1, survived: reported ? 1 : 0, lost: 0 });
    expect(result.entryCount).toBe(2);
    expect(reported).toBe(true);
  });

  it("the CLI's import and compact <file> refuse them too, with the reason, exit status 1", async () => {
    const home = dirs.make("bc-odd-cli-");
    for (const [scenario, path, , cliSays] of oddFiles()) {
      for (const command of [["import", path], ["compact", path]]) {
        const run = await runCli(command, { home });
        const output = run.stderr + run.stdout;
        // The CLI checks the file itself before asking the daemon, in its own words.
        const refused = run.code === 1 && cliSays.test(output);
        recordScore({ area: "odd files", scenario: `cli ${command[0]}: ${scenario}`, tried: 1, survived: refused ? 1 : 0, lost: 0 });
        expect(run.code, `${command.join(" ")}: ${output}`).toBe(1);
        expect(output).toMatch(cliSays);
      }
    }
  });
});
