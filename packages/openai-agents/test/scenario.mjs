// The real Agents SDK driving a BaseContextSession, for test/openai-agents*.e2e.test.ts. Runs under
// Node ≥ 22 (the SDK's openai 7 needs it). Model: chat completions at OPENAI_BASE_URL (the test's
// fake server). Daemon: BASE_CONTEXT_DAEMON_COMMAND (JSON array), or BASE_CONTEXT_SOCKET.
// Prints one JSON line per event on stdout; the test reads them.
//
//   node scenario.mjs long <turns>     a long run with tool calls, then popItem and clearSession
//   node scenario.mjs window <turns>   a long run with the daemon's defaults, then popItem down to an empty context
//   node scenario.mjs options          the session's compaction option in the threshold, and its errors
//   node scenario.mjs kill             a run (session.run) whose daemon is killed while the model works
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { BaseContextError, BaseContextSession } from "@base-context/openai-agents";

setTracingDisabled(true);
const [mode = "long", turnsArg = "32"] = process.argv.slice(2);
const emit = (event) => process.stdout.write(`${JSON.stringify({ ...event, at: Date.now() })}\n`);

const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: "test", maxRetries: 0 });
const model = new OpenAIChatCompletionsModel(openai, "fake-agent-model");
const command = JSON.parse(process.env.BASE_CONTEXT_DAEMON_COMMAND ?? "null");
const daemon = process.env.BASE_CONTEXT_SOCKET
  ? { socket: process.env.BASE_CONTEXT_SOCKET }
  : { command: command[0], args: command.slice(1) };

const readFile = tool({
  name: "read_file",
  description: "Reads a file of the project",
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => {
    emit({ event: "tool", name: "read_file" });
    return `// ${path}\n${`export const value = "${path}"; // padding line of the file\n`.repeat(Number(process.env.READ_LINES ?? 30))}`;
  },
});
const runTests = tool({
  name: "run_tests",
  description: "Runs the test suite",
  parameters: z.object({ filter: z.string() }),
  execute: async ({ filter }) => {
    emit({ event: "tool", name: "run_tests" });
    return `FAIL ${filter}\nError: expected 3 but got 4 in ${filter}\n1 failed, 41 passed`;
  },
});
const agent = new Agent({ name: "fixer", instructions: "Fix the failing tests, one file at a time.", model, tools: [readFile, runTests] });

const newSession = (extra = {}) =>
  new BaseContextSession({ contextWindow: Number(process.env.CONTEXT_WINDOW ?? "6000"), daemon, model, cwd: process.cwd(), ...extra });

/** What went wrong, as the test reads it. */
const failure = (error) => ({
  name: error?.constructor?.name,
  code: error?.code,
  rpcCode: error?.rpcCode,
  isBaseContextError: error instanceof BaseContextError,
  message: String(error?.message ?? error),
});

/** `turns` runs, one event each with what runCompaction did. */
async function runTurns(session, turns) {
  emit({ event: "session", sessionId: await session.getSessionId() });
  for (let turn = 1; turn <= turns; turn++) {
    const result = await run(agent, `Turn ${turn}: fix src/file${turn}.ts (constraint: never edit generated files)`, {
      session,
      signal: session.signal,
    });
    const last = session.lastCompaction;
    emit({
      event: "turn",
      turn,
      output: result.finalOutput,
      compaction:
        last && "result" in last
          ? {
              status: last.result.status,
              summarizer: last.result.summarizer,
              entryId: last.result.entry?.id,
              retention: last.result.retention,
            }
          : last,
    });
  }
}

/** popItem until the context is empty: each pop must return the last item; the compaction boundary must not break it. */
async function popToEmpty(session) {
  let items = await session.getItems();
  let pops = 0;
  const mismatches = [];
  while (items.length > 0 && pops < 10_000) {
    const last = items.at(-1);
    let popped;
    try {
      popped = await session.popItem();
    } catch (error) {
      emit({ event: "popFailed", pops, left: items.length, error: failure(error) });
      return;
    }
    pops++;
    if (JSON.stringify(popped) !== JSON.stringify(last)) mismatches.push(pops);
    items = await session.getItems();
  }
  emit({ event: "poppedAll", pops, left: items.length, mismatches, afterPop: await session.popItem() });
}

const session = newSession();
try {
  if (mode === "long") {
    await runTurns(session, Number(turnsArg));
    const items = await session.getItems();
    emit({ event: "items", items });
    const popped = await session.popItem();
    emit({ event: "popped", popped, items: await session.getItems() });
    const forced = await session.runCompaction({ force: true });
    emit({ event: "forced", usage: forced?.usage ?? null, status: session.lastCompaction?.result?.status, items: await session.getItems() });
    await session.clearSession();
    emit({ event: "cleared", items: await session.getItems() });
    const after = await run(agent, "Turn after clear: fix src/fresh.ts", { session });
    emit({ event: "afterClear", output: after.finalOutput, items: await session.getItems() });
  } else if (mode === "window") {
    await runTurns(session, Number(turnsArg));
    await popToEmpty(session);
  } else if (mode === "options") {
    const tuned = newSession({ contextWindow: 20_000, compaction: { reserveTokens: 2_000 } });
    await run(agent, "Turn 1: fix src/file1.ts", { session: tuned });
    emit({ event: "tuned", lastCompaction: tuned.lastCompaction });
    await tuned.close();
    for (const options of [{ contextWindow: 0 }, { contextWindow: 8_000, compaction: { keepRecentTokens: -1 } }]) {
      try {
        newSession(options);
        emit({ event: "accepted", options });
      } catch (error) {
        emit({ event: "refused", options, error: failure(error) });
      }
    }
    for (const [what, attempt] of [
      ["replaceHistoryWithCompaction", () => session.replaceHistoryWithCompaction([{ role: "user", content: "not a compaction item" }])],
      ["sessionId", async () => {
        const unknown = newSession({ sessionId: "no-such-session" });
        await unknown.addItems([{ role: "user", content: "hi" }]).finally(() => unknown.close());
      }],
    ]) {
      try {
        await attempt();
        emit({ event: "accepted", what });
      } catch (error) {
        emit({ event: "refused", what, error: failure(error) });
      }
    }
  } else {
    emit({ event: "session", sessionId: await session.getSessionId() });
    try {
      // The test kills the daemon while the model answers this turn's tool results.
      await session.run(agent, "Turn 1: fix src/file1.ts");
      emit({ event: "finished" });
    } catch (error) {
      emit({ event: "error", ...failure(error), signalAborted: session.signal.aborted });
    }
  }
} finally {
  await session.close().catch(() => undefined);
}
