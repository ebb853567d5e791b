import Database from "better-sqlite3";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import { DatabaseTooNewError, SCHEMA_VERSION } from "../sessions/database-file.js";
import { checkDatabase } from "./doctor-checks.js";
import { databaseFailure, withDaemon } from "./open-daemon.js";
import type { CliError } from "./run.js";

describe("a database written by a newer base-context", () => {
  const dirs = tempDirs();
  let path: string;
  beforeEach(() => {
    path = join(dirs.make(), "sessions.db");
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
  });
  afterEach(() => dirs.cleanup());

  it("is recognised by its error class, whatever the message says", () => {
    const failure = databaseFailure(path, Object.assign(new DatabaseTooNewError(SCHEMA_VERSION + 1, SCHEMA_VERSION), { message: "reworded" }));
    expect(failure.message).toBe(`the session database ${path} was written by a newer base-context: reworded`);
    expect(failure.hints[0]).toMatch(/^Update base-context/);
    // A message that merely looks alike is not taken for one.
    expect(databaseFailure(path, new Error("newer than this daemon understands")).message).not.toMatch(/written by a newer/);
  });

  it("makes a CLI command say to update", async () => {
    const io = {
      stdout: { write: () => true },
      stderr: { write: () => true },
      env: { BASE_CONTEXT_HOME: dirname(path), BASE_CONTEXT_DB: path },
    };
    await expect(withDaemon(io, async () => "opened")).rejects.toThrow(/was written by a newer base-context/);
  });

  it("refuses a home on a pseudo file system at once, saying so, instead of trying to make folders there", async () => {
    const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: { BASE_CONTEXT_HOME: "/proc/nope" } };
    const failure = (await withDaemon(io, async () => "opened").catch((error: unknown) => error)) as CliError;
    expect(failure.message).toMatch(/^cannot use \/proc\/nope: \/proc is the kernel's process file system \(procfs\)/);
    expect(failure.hints).toEqual([expect.stringMatching(/^Set BASE_CONTEXT_HOME/)]);
  });

  it("fails the doctor's database check with the same advice", () => {
    const result = checkDatabase(path);
    expect(result.status).toBe("fail");
    expect(result.summary).toMatch(/was written by a newer base-context: the database has schema version/);
    expect(result.fixes[0]).toMatch(/^Update base-context/);
  });
});
