// The real Agents SDK driving a BaseContextSession, for test/openai-agents.e2e.test.ts. Runs under
// Node ≥ 22 (the SDK's openai 7 needs it). Model: chat completions at OPENAI_BASE_URL (the test's
// fake server). Daemon: BASE_CONTEXT_DAEMON_COMMAND (JSON array), or BASE_CONTEXT_SOCKET.
// Prints one JSON line per event on stdout; the test reads them.
//
//   node scenario.mjs long <turns>   a long run with tool calls, then popItem and clearSession
//   node scenario.mjs kill           a run whose daemon is killed while the model works
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { BaseContextSession } from "@base-context/openai-agents";

setTracingDisabled(true);
const [mode = "long", turnsArg = "32"] = process.argv.slice(2);
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

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
  execute: async ({ path }) => `// ${path}\n${`export const value = "${path}"; // padding line of the file\n`.repeat(30)}`,
});
const runTests = tool({
  name: "run_tests",
  description: "Runs the test suite",
  parameters: z.object({ filter: z.string() }),
  execute: async ({ filter }) => `FAIL ${filter}\nError: expected 3 but got 4 in ${filter}\n1 failed, 41 passed`,
});
const agent = new Agent({ name: "fixer", instructions: "Fix the failing tests, one file at a time.", model, tools: [readFile, runTests] });

const session = new BaseContextSession({
  contextWindow: Number(process.env.CONTEXT_WINDOW ?? "6000"),
  daemon,
  model,
  cwd: process.cwd(),
});

try {
  if (mode === "long") {
    emit({ event: "session", sessionId: await session.getSessionId() });
    for (let turn = 1; turn <= Number(turnsArg); turn++) {
      const result = await run(agent, `Turn ${turn}: fix src/file${turn}.ts (constraint: never edit generated files)`, { session });
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
  } else {
    emit({ event: "session", sessionId: await session.getSessionId() });
    try {
      // The test kills the daemon while the model answers this turn's tool results.
      await run(agent, "Turn 1: fix src/file1.ts", { session });
      emit({ event: "finished" });
    } catch (error) {
      emit({ event: "error", name: error?.constructor?.name, message: String(error?.message ?? error) });
    }
  }
} finally {
  await session.close().catch(() => undefined);
}
