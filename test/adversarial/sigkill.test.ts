/**
 * SIGKILL loop: daemons killed in the middle of appends, an import, a compaction and a tree
 * navigation, one database throughout. After every kill: PRAGMA integrity_check is ok, every
 * acknowledged append is stored exactly once with the right parent, and the next daemon (or one
 * that was running all along) carries on: a half-import no longer blocks its session id, a dead
 * daemon's compaction job reads `interrupted`, and the interrupted operation can be run again.
 */
import {
  CompactionRun,
  CompactionStatusRequest,
  EntryAppend,
  SessionCreate,
  SessionDelete,
  SessionGet,
  SessionImport,
  TreeNavigate,
} from "@base-context/protocol";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon } from "../support/daemon.js";
import { reply, useFakeOpenAI } from "../support/fake-openai.js";
import { waitFor } from "../support/wait.js";
import { recordScore } from "./scoreboard.js";
import {
  assistant,
  checkChain,
  integrity,
  isImporting,
  kill,
  pause,
  seeded,
  sessionRows,
  storedEntryCount,
  user,
  writePiFile,
} from "./store-support.js";

const fake = useFakeOpenAI();
let home: string;
const random = seeded(11);
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), "bc-adversarial-sigkill-"));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const start = () =>
  startDaemon({
    home,
    settings: {
      compaction: { keepRecentTokens: 1 },
      summarizer: { provider: "openai", baseURL: fake.baseURL, model: "fake", maxRetries: 0, timeoutMs: 60_000, fallback: false },
    },
    env: { OPENAI_API_KEY: "test-key" },
  });

/** One row per kind of operation killed; filled by the tests, recorded at the end. */
const rows = new Map<string, { tried: number; survived: number; lost: number }>();
function score(scenario: string, survived: boolean, lost: number): void {
  const row = rows.get(scenario) ?? { tried: 0, survived: 0, lost: 0 };
  row.tried++;
  if (survived) row.survived++;
  row.lost += lost;
  rows.set(scenario, row);
}
afterAll(() => {
  for (const [scenario, row] of rows) recordScore({ area: "sigkill", scenario, ...row });
});

// Kills and restarts of real processes on a loaded machine: each test is long, not slow to fail.
describe("SIGKILL loop", { timeout: 120_000 }, () => {
  it("loses no acknowledged append when the daemon is killed mid-burst", async () => {
    let sessionId: string | undefined;
    const acknowledged: string[] = [];
    for (let round = 0; round < 4; round++) {
      const daemon = await start();
      sessionId ??= (await daemon.client.request(SessionCreate, { cwd: "/adversarial/appends" })).session.id;
      // Appends one after another (each on the leaf the previous one made) until the kill.
      let appended = 0;
      const writer = (async () => {
        for (let index = 0; ; index++) {
          const { entry } = await daemon.client.request(EntryAppend, { sessionId: sessionId!, entry: user(`round ${round} #${index}`) });
          acknowledged.push(entry.id);
          appended++;
        }
      })().catch(() => undefined);
      await waitFor(() => appended > 0, { timeoutMs: 20_000, message: "the first append was acknowledged" });
      await pause(20 + random() * 200);
      await kill(daemon);
      await writer;
      const verdict = integrity(home);
      const { problems, missing } = checkChain(sessionRows(home, sessionId), acknowledged);
      expect(verdict).toBe("ok");
      expect(problems).toEqual([]);
      score("appends, one writer", verdict === "ok" && problems.length === 0, missing);
    }
    expect(acknowledged.length).toBeGreaterThan(0);
  });

  it("frees a killed import's session id: the import can be run again at once", async () => {
    const file = join(home, "big.jsonl");
    const sessionId = "adversarial-import";
    const count = 5000;
    writePiFile(file, sessionId, count);
    for (let round = 0; round < 3; round++) {
      // Round 0 and 2: a daemon that was running all along takes the id over (on demand);
      // round 1: a daemon started after the kill (at start-up).
      const bystander = round === 1 ? undefined : await start();
      const importer = await start();
      const importing = importer.client.request(SessionImport, { format: "pi-jsonl", path: file }).catch(() => undefined);
      await waitFor(
        () => isImporting(home, sessionId) || (storedEntryCount(home, sessionId) === count && !isImporting(home, sessionId)),
        {
          timeoutMs: 30_000,
          intervalMs: 5,
          message: "the import started",
        },
      );
      await pause(random() * 100);
      await kill(importer);
      await importing;
      const next = bystander ?? (await start());
      let survived = integrity(home) === "ok";
      let lost = 0;
      try {
        const result = await next.client.request(SessionImport, { format: "pi-jsonl", path: file });
        expect(result.entryCount).toBe(count);
      } catch (error) {
        // Only if the killed import had finished: then the whole session is there and visible.
        const existing = await next.client.request(SessionGet, { sessionId }).catch(() => undefined);
        if (existing?.entryCount !== count) {
          survived = false;
          lost = 1;
          expect.fail(`import after the kill failed: ${(error as Error).message}`);
        }
      }
      const { problems } = checkChain(sessionRows(home, sessionId), []);
      if (problems.length > 0) survived = false;
      expect(problems).toEqual([]);
      score("import", survived, lost);
      await next.client.request(SessionDelete, { sessionId });
      await next.close();
    }
  });

  it("reports a killed daemon's compaction interrupted to a daemon that stayed, which can then compact", async () => {
    for (let round = 0; round < 2; round++) {
      const survivor = await start();
      const doomed = await start();
      const { session } = await survivor.client.request(SessionCreate, { cwd: "/adversarial/compaction" });
      const sessionId = session.id;
      const acknowledged: string[] = [];
      for (let index = 0; index < 6; index++) {
        const { entry } = await survivor.client.request(EntryAppend, {
          sessionId,
          entry: index % 2 ? assistant(`a${index} ${"w ".repeat(400)}`) : user(`u${index} ${"w ".repeat(400)}`),
        });
        acknowledged.push(entry.id);
      }
      fake.setHandler(() => reply.hang());
      const chats = fake.chatRequests().length;
      const running = doomed.client.request(CompactionRun, { sessionId }).catch(() => undefined);
      await waitFor(() => fake.chatRequests().length > chats, { timeoutMs: 20_000, message: "the compaction asked the model" });
      expect((await survivor.client.request(CompactionStatusRequest, { sessionId })).jobs[0]!.state).toBe("summarizing");
      await kill(doomed);
      await running;
      const [job] = (await survivor.client.request(CompactionStatusRequest, { sessionId })).jobs;
      expect(job!.state).toBe("interrupted");
      fake.setHandler(() => reply.text("## Goal\nsummary after the kill"));
      const result = await survivor.client.request(CompactionRun, { sessionId });
      expect(result.status).toBe("committed");
      const verdict = integrity(home);
      const { problems, missing } = checkChain(sessionRows(home, sessionId), acknowledged);
      expect(verdict).toBe("ok");
      expect(problems).toEqual([]);
      score("compaction", verdict === "ok" && problems.length === 0 && job!.state === "interrupted", missing);
      await survivor.close();
    }
  });

  it("keeps the tree whole when a daemon is killed mid-navigation; the navigation can be run again", async () => {
    for (let round = 0; round < 2; round++) {
      const doomed = await start();
      const { session } = await doomed.client.request(SessionCreate, { cwd: "/adversarial/tree" });
      const sessionId = session.id;
      const acknowledged: string[] = [];
      for (let index = 0; index < 4; index++) {
        const { entry } = await doomed.client.request(EntryAppend, {
          sessionId,
          entry: index % 2 ? assistant(`a${index}`) : user(`u${index}`),
        });
        acknowledged.push(entry.id);
      }
      const leafBefore = acknowledged.at(-1)!;
      fake.setHandler(() => reply.hang());
      const chats = fake.chatRequests().length;
      const navigating = doomed.client
        .request(TreeNavigate, { sessionId, targetId: acknowledged[0]!, summarize: true })
        .catch(() => undefined);
      await waitFor(() => fake.chatRequests().length > chats, { timeoutMs: 20_000, message: "the navigation asked the model" });
      await kill(doomed);
      await navigating;
      const next = await start();
      const leafAfterKill = (await next.client.request(SessionGet, { sessionId })).leafId;
      fake.setHandler(() => reply.text("## Goal\nbranch summary"));
      const result = await next.client.request(TreeNavigate, { sessionId, targetId: acknowledged[0]!, summarize: true });
      const verdict = integrity(home);
      const { problems, missing } = checkChain(sessionRows(home, sessionId).slice(0, 4), acknowledged);
      expect(leafAfterKill).toBe(leafBefore);
      expect(result.status).toBe("moved");
      expect(verdict).toBe("ok");
      expect(problems).toEqual([]);
      score("tree navigation", verdict === "ok" && problems.length === 0 && leafAfterKill === leafBefore, missing);
      await next.close();
    }
  });
});
