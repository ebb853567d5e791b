/**
 * Four daemons on one database, shortened (the adversarial run went on for 60 s; latency is
 * measured in bench/contention.mjs): each appends APPENDS entries as fast as its replies come
 * back, two sessions each shared by two daemons. Afterwards every acknowledged append is stored exactly once, each
 * session is one chain (an append attaches to the leaf as it is when its transaction runs), and
 * PRAGMA integrity_check is ok.
 */
import { EntryAppend, SessionCreate } from "@base-context/protocol";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type TestDaemon } from "../support/daemon.js";
import { recordScore } from "./scoreboard.js";
import { checkChain, integrity, sessionRows } from "./store-support.js";

const DAEMONS = 4;
const APPENDS = 40;

let home: string;
const daemons: TestDaemon[] = [];
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "bc-adversarial-four-"));
  // Started one after another: what is under test is four daemons appending at once, not four
  // cold starts racing each other for the CPU of a loaded test machine.
  for (let d = 0; d < DAEMONS; d++) daemons.push(await startDaemon({ home }));
});
afterAll(async () => {
  await Promise.all(daemons.map((daemon) => daemon.close()));
  rmSync(home, { recursive: true, force: true });
});

describe("four daemons appending to one database", { timeout: 60_000 }, () => {
  it("stores every acknowledged append once, in one chain per session", async () => {
    const sessions: string[] = [];
    for (let i = 0; i < 2; i++) sessions.push((await daemons[0]!.client.request(SessionCreate, { cwd: "/adversarial/four" })).session.id);
    const acknowledged: string[][] = [[], []];
    let failures = 0;
    await Promise.all(
      daemons.map(async (daemon, d) => {
        const sessionId = sessions[d % 2]!;
        for (let index = 0; index < APPENDS; index++) {
          try {
            const { entry } = await daemon.client.request(EntryAppend, {
              sessionId,
              entry: { type: "message", message: { role: "user", content: `daemon ${d} #${index} ${"z".repeat(500)}`, timestamp: 1 } },
            });
            acknowledged[d % 2]!.push(entry.id);
          } catch {
            failures++;
          }
        }
      }),
    );
    const verdict = integrity(home);
    let lost = failures;
    const problems: string[] = [];
    sessions.forEach((sessionId, s) => {
      const rows = sessionRows(home, sessionId);
      const check = checkChain(rows, acknowledged[s]!);
      problems.push(...check.problems);
      lost += check.missing + (rows.length - acknowledged[s]!.length); // nothing stored that was not acknowledged
    });
    const tried = acknowledged[0]!.length + acknowledged[1]!.length + failures;
    recordScore({
      area: "four daemons",
      scenario: `${DAEMONS} × ${APPENDS} appends, 2 shared sessions`,
      tried,
      survived: tried - failures - problems.length,
      lost: lost + problems.length,
    });
    expect(verdict).toBe("ok");
    expect(failures).toBe(0);
    expect(problems).toEqual([]);
    expect(lost).toBe(0);
    expect(tried).toBe(DAEMONS * APPENDS);
  });
});
