// An OpenAI Agents SDK agent with a few tools, run turn after turn on one Base Context session: the
// daemon stores every item, compacts when the context window fills (with this agent's own model)
// and keeps the whole history in its tree. Node ≥ 22.
//
//   OPENAI_API_KEY=… node main.mjs [turns]      (OPENAI_BASE_URL / MODEL for another host or model)
//   base-context tree <session>                 the stored session afterwards, compactions included
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { Agent, OpenAIChatCompletionsModel, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { BaseContextError, BaseContextSession } from "@base-context/openai-agents";

const root = process.cwd();
const turns = Number(process.argv[2] ?? 20);
const model = new OpenAIChatCompletionsModel(new OpenAI({ baseURL: process.env.OPENAI_BASE_URL }), process.env.MODEL ?? "gpt-4.1-mini");
// BASE_CONTEXT_DAEMON: the daemon's script (e.g. packages/daemon/bin/base-context.js), else `base-context` on PATH.
const daemon = process.env.BASE_CONTEXT_DAEMON ? { command: process.execPath, args: [process.env.BASE_CONTEXT_DAEMON, "serve"] } : {};

const listFiles = tool({
  name: "list_files",
  description: "Lists the files of a folder of the project",
  parameters: z.object({ folder: z.string() }),
  execute: async ({ folder }) => {
    const entries = await readdir(join(root, folder), { withFileTypes: true });
    return entries.map((entry) => `${entry.name}${entry.isDirectory() ? "/" : ""}`).join("\n");
  },
});
const readSource = tool({
  name: "read_file",
  description: "Reads a text file of the project (first 200 lines)",
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => (await readFile(join(root, path), "utf8")).split("\n").slice(0, 200).join("\n"),
});
const note = tool({
  name: "note",
  description: "Records a finding for the final report",
  parameters: z.object({ finding: z.string() }),
  execute: async ({ finding }) => `noted: ${finding}`,
});

const agent = new Agent({
  name: "reviewer",
  instructions: `You review the project in ${relative(process.env.HOME ?? "/", root) || root}, one part per turn. Use the tools; record findings with note.`,
  model,
  tools: [listFiles, readSource, note],
});

const session = new BaseContextSession({ contextWindow: Number(process.env.CONTEXT_WINDOW ?? 32_000), model, daemon });
try {
  console.log(`session ${await session.getSessionId()}`);
  let prompt = "Start: list the top folder and pick the first part to review.";
  for (let turn = 1; turn <= turns; turn++) {
    // session.run is the SDK's run on this session: it stops at once if the daemon goes away.
    const result = await session.run(agent, prompt);
    const compaction = session.lastCompaction;
    const compacted = compaction && "result" in compaction && compaction.result.status === "committed";
    console.log(`turn ${turn}: ${String(result.finalOutput).split("\n")[0]}${compacted ? "  [compacted]" : ""}`);
    prompt = "Continue with the next part.";
  }
} catch (error) {
  // The session's errors (BaseContextError: the daemon gone, or refusing) say what happened and what to do.
  process.exitCode = 1;
  console.error(error instanceof BaseContextError ? `${error.name}: ${error.message}` : error);
} finally {
  await session.close().catch(() => undefined);
}
