/**
 * Three daemons appending to two shared sessions while a fourth compacts them, all on one store
 * (one SQLite file, or in the postgres project one PostgreSQL database, as daemons on several hosts
 * would share it). The compactor first commits a compaction (its model held back until every writer
 * appended meanwhile), then is SIGKILLed while its model hangs in a second one. Afterwards: every
 * acknowledged append is stored exactly once, each session is still one chain (an append attaches
 * to the leaf as it is when its transaction runs; a compaction to the leaf it was still on the path
 * of), the leaf is the chain's end, the only other entries are the committed compactions', and the
 * killed job is reported interrupted by the other daemons (its owner is gone, on PostgreSQL its
 * lease with it), after which one of them compacts the session again.
 */
import {
  CompactionRun,
  CompactionStatusRequest,
  EntryAppend,
  SessionCreate,
  SessionGet,
  type CompactionJobState,
} from "@base-context/protocol";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type TestDaemon } from "../support/daemon.js";
import { reply, useFakeOpenAI } from "../support/fake-openai.js";
import { waitFor } from "../support/wait.js";
import { recordScore } from "./scoreboard.js";
import { assistant, checkChain, integrity, kill, pause, seeded, sessionRows, user, type StoredRow } from "./store-support.js";

const WRITERS = 3;
/** Appends every writer makes while a compaction is under way, at the least, before it ends or is killed. */
const OVERLAP = 5;

const fake = useFakeOpenAI();
const random = seeded(18);
let home: string;
const writers: TestDaemon[] = [];
let compactor: TestDaemon | undefined;

const start = () =>
  startDaemon({
    home,
    settings: {
      compaction: { keepRecentTokens: 1 },
      summarizer: { provider: "openai", baseURL: fake.baseURL, model: "fake", maxRetries: 0, timeoutMs: 60_000, fallback: false },
    },
    env: { OPENAI_API_KEY: "test-key" },
  });

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "bc-adversarial-shared-"));
  // One after another: what is under test is four daemons at work at once, not four cold starts.
  for (let w = 0; w < WRITERS; w++) writers.push(await start());
  compactor = await start();
});
afterAll(async () => {
  await Promise.all([...writers, ...(compactor ? [compactor] : [])].map((daemon) => daemon.close()));
  rmSync(home, { recursive: true, force: true });
});

/** The entry type of a stored row (its JSON is text on SQLite, and may come back parsed from PostgreSQL). */
function entryType(row: StoredRow): string {
  const entry = (typeof row.json === "string" ? JSON.parse(row.json) : row.json) as { type: string };
  return entry.type;
}

/**
 * Every writer appends to both sessions in turn, each append as soon as the previous one was
 * answered, until `stop` (which says how many appends failed). `goOn` waits until every writer has
 * made OVERLAP more appends than it had at the call.
 */
function startAppending(sessions: string[], acknowledged: Map<string, string[]>) {
  let appending = true;
  let failures = 0;
  const appendedBy = writers.map(() => 0);
  // What each writer is doing, for the message of a wait that times out.
  const sentAt = writers.map(() => 0);
  const lastFailure = writers.map((): string | undefined => undefined);
  const writing = writers.map(async (writer, w) => {
    for (let index = 0; appending; index++) {
      const sessionId = sessions[index % 2]!;
      try {
        sentAt[w] = Date.now();
        const { entry } = await writer.client.request(EntryAppend, { sessionId, entry: user(`writer ${w} #${index} ${"z".repeat(200)}`) });
        acknowledged.get(sessionId)!.push(entry.id);
        appendedBy[w]!++;
      } catch (error) {
        failures++;
        lastFailure[w] = (error as Error).message;
        // The test ended (failed) and closed the daemons: a closed connection refuses at once,
        // and looping on that would never yield to the event loop again.
        if (/closed|disposed/i.test((error as Error).message)) return;
      }
    }
  });
  const goOn = async (what: string) => {
    const before = [...appendedBy];
    try {
      await waitFor(() => appendedBy.every((count, w) => count >= before[w]! + OVERLAP), { timeoutMs: 30_000, message: what });
    } catch (error) {
      const now = Date.now();
      const states = writers.map(
        (writer, w) =>
          `writer ${w}: ${before[w]} -> ${appendedBy[w]} appends, current one sent ${now - sentAt[w]!} ms ago` +
          `${lastFailure[w] ? `, last failure: ${lastFailure[w]}` : ""}, stderr: ${writer.stderr().slice(-2000) || "(none)"}`,
      );
      throw new Error(`${(error as Error).message}; ${failures} failed appends\n${states.join("\n")}`);
    }
  };
  const stop = async (): Promise<number> => {
    appending = false;
    await Promise.all(writing);
    return failures;
  };
  return { goOn, stop };
}

/**
 * What is wrong with the store, and how many acknowledged appends it lacks: each session must be
 * one chain holding every acknowledged append once, plus exactly the committed compactions, its
 * leaf the chain's end.
 */
async function storeProblems(
  reader: TestDaemon,
  sessions: string[],
  acknowledged: Map<string, string[]>,
  compactions: Map<string, string[]>,
): Promise<{ problems: string[]; missing: number }> {
  const problems: string[] = [];
  let missing = 0;
  for (const sessionId of sessions) {
    const rows = sessionRows(home, sessionId);
    const check = checkChain(rows, acknowledged.get(sessionId)!);
    problems.push(...check.problems);
    missing += check.missing;
    const appended = new Set(acknowledged.get(sessionId));
    const others = rows.filter((row) => !appended.has(row.id));
    const otherCompactions = others.filter((row) => entryType(row) === "compaction").map((row) => row.id);
    if (JSON.stringify(otherCompactions) !== JSON.stringify(compactions.get(sessionId))) {
      problems.push(`session ${sessionId}: compactions ${otherCompactions.join(", ")}, expected ${compactions.get(sessionId)!.join(", ")}`);
    }
    // A compaction may hide tool output in the kept part with a prune entry; nothing else is unasked for.
    for (const row of others) if (!["compaction", "prune"].includes(entryType(row))) problems.push(`unacknowledged ${entryType(row)} ${row.id}`);
    const { leafId } = await reader.client.request(SessionGet, { sessionId });
    if (leafId !== rows.at(-1)?.id) problems.push(`session ${sessionId}: leaf ${leafId} is not the chain's end ${rows.at(-1)?.id}`);
  }
  return { problems, missing };
}

describe("three daemons appending while a fourth compacts and is killed", { timeout: 120_000 }, () => {
  it("loses, duplicates and mis-parents nothing, and the killed compaction is reclaimed", async () => {
    const [first, second, third] = writers as [TestDaemon, TestDaemon, TestDaemon];
    const doomed = compactor!;
    const sessions: string[] = [];
    const acknowledged = new Map<string, string[]>();
    for (let s = 0; s < 2; s++) {
      const sessionId = (await first.client.request(SessionCreate, { cwd: "/adversarial/shared" })).session.id;
      sessions.push(sessionId);
      acknowledged.set(sessionId, []);
      // Something worth compacting before the race starts.
      for (let index = 0; index < 6; index++) {
        const entry = index % 2 ? assistant(`a${index} ${"w ".repeat(400)}`) : user(`u${index} ${"w ".repeat(400)}`);
        acknowledged.get(sessionId)!.push((await first.client.request(EntryAppend, { sessionId, entry })).entry.id);
      }
    }
    const [killedSession, committedSession] = sessions as [string, string];

    const appends = startAppending(sessions, acknowledged);
    const appendsGoOn = appends.goOn;

    // 1. A compaction that completes while the appends go on: its model answers only once every
    //    writer appended meanwhile. The leaf moved, but along the path the compaction was prepared
    //    for, so it commits on the leaf as it is then.
    let answer = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    fake.setHandler(async () => {
      await answered;
      return reply.text("## Goal\nsummary written while others appended");
    });
    let chats = fake.chatRequests().length;
    const committing = doomed.client.request(CompactionRun, { sessionId: committedSession });
    // Should a wait below fail, closing the daemons cancels it: not an unhandled rejection besides.
    committing.catch(() => undefined);
    await waitFor(() => fake.chatRequests().length > chats, { timeoutMs: 20_000, message: "the first compaction asked the model" });
    await appendsGoOn("the writers appended while the first compaction was summarizing");
    answer();
    const committed = await committing;
    expect(committed.status).toBe("committed");
    const compactions = new Map<string, string[]>([[committedSession, [committed.entry!.id]], [killedSession, []]]);

    // 2. A compaction whose model hangs, killed mid-way while the appends go on.
    fake.setHandler(() => reply.hang());
    chats = fake.chatRequests().length;
    const killed = doomed.client.request(CompactionRun, { sessionId: killedSession }).catch(() => undefined);
    await waitFor(() => fake.chatRequests().length > chats, { timeoutMs: 20_000, message: "the second compaction asked the model" });
    const [running] = (await second.client.request(CompactionStatusRequest, { sessionId: killedSession })).jobs;
    expect(running!.state).toBe("summarizing");
    await appendsGoOn("the writers appended while the second compaction was summarizing");
    await pause(random() * 100);
    await kill(doomed);
    compactor = undefined;
    await killed;
    await appendsGoOn("the writers appended after the compactor was killed");

    // 3. The other daemons see the killed job for what it is. A dead owner is found out when its
    //    process is gone (on PostgreSQL: when the server has ended its lease connection); until
    //    then the job may still read "summarizing", never anything else.
    const states = new Set<CompactionJobState>();
    const job = await waitFor(
      async () => {
        const [latest] = (await third.client.request(CompactionStatusRequest, { sessionId: killedSession })).jobs;
        states.add(latest!.state);
        return latest!.state === "interrupted" ? latest : undefined;
      },
      { timeoutMs: 10_000, message: "the killed compaction was reported interrupted" },
    );
    expect(job.id).toBe(running!.id);
    expect([...states].filter((state) => state !== "summarizing" && state !== "interrupted")).toEqual([]);
    // Another daemon reports it the same way.
    expect((await first.client.request(CompactionStatusRequest, { sessionId: killedSession })).jobs[0]).toMatchObject({
      id: running!.id,
      state: "interrupted",
    });

    const failures = await appends.stop();

    // 4. The session the killed job was on can be compacted again, by a daemon that stayed.
    fake.setHandler(() => reply.text("## Goal\nsummary after the kill"));
    const again = await second.client.request(CompactionRun, { sessionId: killedSession });
    expect(again.status).toBe("committed");
    compactions.get(killedSession)!.push(again.entry!.id);

    // 5. The store: each session one chain holding every acknowledged append once, plus exactly
    //    the committed compactions; its leaf the chain's end.
    const verdict = integrity(home);
    const { problems, missing } = await storeProblems(first, sessions, acknowledged, compactions);
    const lost = failures + missing;
    const tried = [...acknowledged.values()].reduce((sum, ids) => sum + ids.length, 0) + failures;
    recordScore({
      area: "shared store",
      scenario: `${WRITERS} writers, compactor killed mid-compaction`,
      tried,
      survived: tried - failures - problems.length,
      lost: lost + problems.length,
    });
    expect(verdict).toBe("ok");
    expect(failures).toBe(0);
    expect(problems).toEqual([]);
    expect(lost).toBe(0);
  });
});
