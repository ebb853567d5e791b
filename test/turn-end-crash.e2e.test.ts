/**
 * A daemon killed with SIGKILL while a turn/end is summarizing: the next daemon on the same home
 * reports the job interrupted, the session is whole (every entry, no compaction, a context that
 * builds), and the retried turn/end stores nothing twice and compacts this time.
 */
import { CompactionStatusRequest, ContextBuild, SessionGet, SessionPath } from "@base-context/protocol";
import { afterEach, expect, it } from "vitest";
import { reply as fakeReply, startFakeOpenAI, type FakeOpenAI } from "./support/fake-openai.js";
import { tempDirs } from "./support/temp-dir.js";
import { waitFor } from "./support/wait.js";
import { replyWithUsage, sessionWithHistory, startTurnEndDaemon, turnEnd, type TurnEndHarness } from "./fixtures/turn-end.js";

const dirs = tempDirs();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  dirs.cleanup();
});

async function daemonOn(fake: FakeOpenAI, home: string): Promise<TurnEndHarness> {
  const harness = await startTurnEndDaemon(fake, home);
  cleanups.push(() => harness.close());
  return harness;
}

it("a daemon killed during summarization leaves the job interrupted and the session intact", async () => {
  const fake = await startFakeOpenAI({ handler: () => fakeReply.hang() });
  cleanups.push(() => fake.close());
  const home = dirs.make("bc-turn-end-crash-");

  const first = await daemonOn(fake, home);
  const sessionId = await sessionWithHistory(first.d.client, home);
  const turn = { sessionId, requestId: "turn-crash", assistant: replyWithUsage(9_500) };
  const lost = turnEnd(first.d.client, turn).then(
    () => "answered",
    () => "lost",
  );
  await waitFor(() => fake.chatRequests().length > 0, { timeoutMs: 20_000, message: "the summary request never reached the model" });
  const running = await first.d.client.request(CompactionStatusRequest, { sessionId });
  expect(running.jobs[0]).toMatchObject({ reason: "threshold", state: "summarizing" });
  const entriesBeforeKill = (await first.d.client.request(SessionGet, { sessionId })).entryCount;

  first.d.process.kill("SIGKILL");
  await first.d.exited;
  await first.close();
  expect(await lost).toBe("lost");

  const second = await daemonOn(fake, home);
  const { jobs } = await second.d.client.request(CompactionStatusRequest, { sessionId });
  expect(jobs[0]).toMatchObject({ reason: "threshold", state: "interrupted", requestId: expect.stringContaining("turn-crash") });
  const { entries } = await second.d.client.request(SessionPath, { sessionId });
  expect(entries).toHaveLength(entriesBeforeKill);
  expect(entries.some((entry) => entry.type === "compaction")).toBe(false);
  expect(entries.at(-1)).toMatchObject({ type: "message", message: { role: "assistant", usage: { totalTokens: 9_500 } } });
  const context = await second.d.client.request(ContextBuild, { sessionId, format: "openai-chat" });
  expect(context.compactionId).toBeUndefined();
  expect(context.messages.length).toBeGreaterThan(0);

  // The client retries the lost turn/end: the reply is not stored twice, and nothing had
  // committed, so it compacts now.
  fake.setHandler((request) => fakeReply.text(`## Goal\nsummary after the restart (${request.body?.model ?? "?"})`));
  const retried = await turnEnd(second.d.client, turn);
  expect(retried).toMatchObject({ followUp: "none", checkpoint: { status: "committed" } });
  expect(retried.failedAfterCheckpoint).toBeUndefined();
  expect((await second.d.client.request(SessionGet, { sessionId })).entryCount).toBe(entriesBeforeKill + 1);
}, 90_000); // two daemon starts and a kill: slow on a busy machine
