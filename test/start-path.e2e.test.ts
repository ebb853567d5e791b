/**
 * The start path (docs/architecture.md#start-path-and-bundles): `initialize` is answered before the
 * database is opened, so the reply does not wait for the file (another process holding it, a
 * migration, its size); requests sent right after it wait for the database, and a database that
 * cannot be opened fails them with a message naming the file.
 */
import { ErrorCodes, SessionCreate, SessionList } from "@base-context/protocol";
import type BetterSqlite3 from "better-sqlite3";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { rpcError } from "./fixtures/e2e.js";
import { startDaemon, type TestDaemon } from "./support/daemon.js";
import { tempDirs } from "./support/temp-dir.js";
import { onPostgres } from "./support/engine.js";

const requireFromDaemon = createRequire(fileURLToPath(new URL("../packages/daemon/package.json", import.meta.url)));
const Database = requireFromDaemon("better-sqlite3") as typeof BetterSqlite3;

const dirs = tempDirs();
const running: TestDaemon[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.close();
  dirs.cleanup();
});

async function daemonOn(home: string): Promise<TestDaemon> {
  const d = await startDaemon({ home, initialize: false });
  running.push(d);
  return d;
}

describe("the start path", () => {
  // This one and the next act on the SQLite file itself (an exclusive file lock, a file that is no database).
  it.skipIf(onPostgres)("answers initialize while another process holds the database, and serves requests once it lets go", async () => {
    const home = dirs.make("bc-start-locked-");
    const first = await daemonOn(home);
    await first.client.initialize({});
    const { session } = await first.client.request(SessionCreate, { cwd: "/home/me/project", name: "kept" });
    await first.close();

    // An exclusive lock: nobody else can even read the file until it is released.
    const holder = new Database(join(home, "sessions.db"));
    holder.pragma("locking_mode = EXCLUSIVE");
    holder.exec("BEGIN EXCLUSIVE");
    let released = false;
    try {
      const d = await daemonOn(home);
      const reply = await d.client.initialize({});
      expect(reply.serverInfo.name).toBe("base-context");
      // Sent while the lock is held: it waits for the database instead of failing.
      const listing = d.client.request(SessionList, {});
      holder.exec("COMMIT");
      holder.close();
      released = true;
      const { sessions } = await listing;
      expect(sessions.map((s) => s.id)).toEqual([session.id]);
    } finally {
      if (!released) holder.close();
    }
  });

  it.skipIf(onPostgres)("answers initialize on a file that is no database, then fails each request with the file's name", async () => {
    const home = dirs.make("bc-start-broken-");
    const databasePath = join(home, "sessions.db");
    writeFileSync(databasePath, "not a SQLite database at all, just text ".repeat(200));
    const d = await daemonOn(home);
    await d.client.initialize({});

    for (const attempt of [1, 2]) {
      const error = await rpcError(d.client.request(SessionList, {}));
      expect(error.code, `attempt ${attempt}`).toBe(ErrorCodes.RequestFailed);
      expect(error.data).toMatchObject({ code: "request_failed", databasePath });
      expect(error.message).toContain(`the daemon cannot use its session database ${databasePath}`);
    }
    // The client can still end it in order.
    await d.client.shutdown();
    expect(await d.exited).toBe(0);
  });

  // The settings' schemas cost a start ~8 ms of CPU: without a settings file the first messages are
  // bounded by the default size limit and the settings are read after the reply, with the daemon.
  it("reads the settings before the reply only when there is a settings file, whose limits bound the first message", async () => {
    const bare = dirs.make("bc-start-no-settings-");
    const plain = await startDaemon({ home: bare, env: { BASE_CONTEXT_LOG: "debug" } });
    running.push(plain);
    const { session } = await plain.client.request(SessionCreate, { cwd: "/home/me/project" });
    expect(session.id).toBeTruthy();
    expect(plain.stderr()).toMatch(/start: answering initialize .*settings read after the reply: no settings file/);

    const configured = dirs.make("bc-start-settings-");
    writeFileSync(join(configured, "settings.json"), JSON.stringify({ limits: { maxMessageBytes: 1024 } }));
    const d = await startDaemon({ home: configured, initialize: false, env: { BASE_CONTEXT_LOG: "debug" } });
    running.push(d);
    // Larger than the file's limit: the connection's first message is refused (and a stdio daemon exits).
    d.client.initialize({ clientInfo: { name: "x".repeat(2000) } }).catch(() => undefined);
    expect(await d.exited).toBe(1);
    expect(d.stderr()).toMatch(/refused: the largest accepted is 1024 bytes \(setting limits.maxMessageBytes\)/);
    expect(d.stderr()).not.toMatch(/settings read after the reply/);
  });

  it("answers initialize with an unreachable or unusable store URL, then fails each request naming the URL without its password", async () => {
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    const url = "postgres://alice:s3cret-pw@127.0.0.1:1/sessions";
    for (const [storeUrl, shown] of [
      [url, "postgres://alice:***@127.0.0.1:1/sessions"],
      ["mysql://alice:s3cret-pw@127.0.0.1/sessions", "mysql://alice:***@127.0.0.1/sessions"],
    ] as const) {
      const home = dirs.make("bc-start-url-");
      const d = await startDaemon({ home, initialize: false, env: { BASE_CONTEXT_STORE_URL: storeUrl } });
      running.push(d);
      await d.client.initialize({});
      const error = await rpcError(d.client.request(SessionList, {}));
      expect(error.code).toBe(ErrorCodes.RequestFailed);
      expect(error.data).toMatchObject({ code: "request_failed", storeUrl: shown });
      expect(error.message).toContain("the daemon cannot use its session store");
      expect(error.message).toContain(shown);
      expect(JSON.stringify(error)).not.toContain("s3cret-pw");
      await d.client.shutdown();
      expect(await d.exited).toBe(0);
    }
  });
});
