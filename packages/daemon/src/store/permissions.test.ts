/**
 * Only the owner can read the store: modes are asserted (tests may run as root, which permission
 * checks do not stop), and where the test runs as root with `runuser` available, another user is
 * shown to be refused.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addLogSink } from "../log.js";
import { secureHomeFolder } from "./permissions.js";
import { SessionStore } from "./session-store.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe("store permissions", () => {
  let folder: string;
  let logged: string[];
  let logSink: { dispose(): void };
  beforeEach(() => {
    folder = dirs.make();
    logged = [];
    logSink = addLogSink((_level, message) => logged.push(message));
  });
  afterEach(() => {
    logSink.dispose();
    dirs.remove(folder);
  });

  const write = async (path: string) => {
    const store = new SessionStore({ path, checkpoints: "sqlite" });
    store.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
    return store;
  };

  it("creates the database folder 0700 and the database, -wal and -shm files 0600, whatever the umask", async () => {
    const previous = process.umask(0o022);
    try {
      const home = join(folder, "home");
      const path = join(home, "sessions.db");
      const store = await write(path);
      expect(modeOf(home)).toBe(0o700);
      for (const file of [path, `${path}-wal`, `${path}-shm`]) expect(modeOf(file)).toBe(0o600);
      await store.close();
    } finally {
      process.umask(previous);
    }
  });

  it("tightens an existing world-readable database and its -wal/-shm, saying so", async () => {
    const path = join(folder, "sessions.db");
    await (await write(path)).close();
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      writeFileSync(file, "", { flag: "a" });
      chmodSync(file, 0o644);
    }
    const reopened = new SessionStore({ path, checkpoints: "sqlite" });
    for (const file of [path, `${path}-wal`, `${path}-shm`]) expect(modeOf(file)).toBe(0o600);
    expect(logged.some((line) => line.includes(path) && line.includes("0644") && line.includes("tightened to 0600"))).toBe(true);
    await reopened.close();
  });

  it("tightens an existing home folder others could read, saying so, and leaves a missing one alone", () => {
    const home = join(folder, "home");
    secureHomeFolder(home);
    expect(() => statSync(home)).toThrow();
    mkdirSync(home, { mode: 0o755 });
    chmodSync(home, 0o755);
    secureHomeFolder(home);
    expect(modeOf(home)).toBe(0o700);
    expect(logged.some((line) => line.includes(home) && line.includes("tightened to 0700"))).toBe(true);
  });

  const canSwitchUser = process.getuid?.() === 0 && spawnSync("runuser", ["-u", "nobody", "--", "true"]).status === 0;

  it.runIf(canSwitchUser)("keeps another user out of the database (runuser as nobody)", async () => {
    chmodSync(folder, 0o755); // the test folder itself: only the store's own modes may stop them
    const home = join(folder, "home");
    const path = join(home, "sessions.db");
    const store = await write(path);
    const read = spawnSync("runuser", ["-u", "nobody", "--", "cat", path]);
    expect(read.status).not.toBe(0);
    expect(read.stderr.toString()).toMatch(/Permission denied/);
    execFileSync("runuser", ["-u", "nobody", "--", "ls", folder]); // the parent was readable all along
    await store.close();
  });
});
