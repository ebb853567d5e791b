/**
 * The suite really runs on the engine its project names (vitest.config.ts): in the postgres
 * project a daemon keeps its sessions in the home's PostgreSQL database and writes no SQLite file,
 * so a daemon that ignored BASE_CONTEXT_STORE_URL could not pass the suite's second run unnoticed.
 */
import { SessionCreate } from "@base-context/protocol";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useDaemon } from "./support/daemon.js";
import { onPostgres, storeUrlFor } from "./support/engine.js";
import { queryJsonSync } from "./support/postgres.js";

describe(`the store engine (${onPostgres ? "postgres" : "sqlite"} project)`, () => {
  const d = useDaemon();

  it("holds the sessions the daemon creates", async () => {
    const { session } = await d.client.request(SessionCreate, { cwd: "/engine/check" });
    const url = storeUrlFor(d.home);
    if (onPostgres) {
      expect(url).toMatch(/^postgres:\/\/.*@127\.0\.0\.1:\d+\/t_/);
      expect(queryJsonSync<string[]>(url!, "SELECT coalesce(json_agg(id), '[]') FROM sessions")).toEqual([session.id]);
      expect(existsSync(join(d.home, "sessions.db"))).toBe(false);
    } else {
      expect(url).toBeUndefined();
      expect(existsSync(join(d.home, "sessions.db"))).toBe(true);
    }
  });
});
