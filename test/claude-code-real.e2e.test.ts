/**
 * The real Claude Code (pinned, from the npm registry: support/claude-code.ts) run headless
 * (`claude -p`) against a fake Anthropic Messages API on 127.0.0.1 (support/fake-anthropic.ts),
 * in a temporary HOME and CLAUDE_CONFIG_DIR, for two turns with tool calls: a file read, an edit,
 * a failing command, then a write. The transcript it wrote is imported (claude-code-jsonl,
 * detected), re-imported after the second turn (only the new lines are added), and its entries,
 * tool pairs, files and errors are checked, the way a user's own transcripts would be read.
 */
import { ContextBuild, SessionImport, SessionPath, type ContextMessage, type SessionEntry } from "@base-context/protocol";
import { computeFileLists, createFileOps, extractFileOpsFromMessage, probeMessages } from "@base-context/core";
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeCodeBinary, type ClaudeBinary } from "./support/claude-code.js";
import { useDaemon } from "./support/daemon.js";
import { messageText, startFakeAnthropic, toolResults, type AnthropicReply, type AnthropicRequestBody, type FakeAnthropic } from "./support/fake-anthropic.js";
import { tempDirs } from "./support/temp-dir.js";

const run = promisify(execFile);
const dirs = tempDirs();
const d = useDaemon();

let claude: ClaudeBinary;
let fake: FakeAnthropic;
let home: string;
let project: string;
const MISSING_DIR = "/base-context-no-such-folder";

/**
 * The fake model's script: a request that offers no tools is one of Claude Code's side requests
 * (titles, topics) and gets a line of text; otherwise the reply follows the tool result it was
 * sent, or the prompt when it was sent none.
 */
function respond(request: AnthropicRequestBody): AnthropicReply {
  if (!request.tools?.some((tool) => tool.name === "Bash")) return { content: [{ type: "text", text: "Fixing a typo" }] };
  const messages = request.messages ?? [];
  const last = messages[messages.length - 1];
  const [result] = toolResults(last);
  const notes = join(project, "notes.txt");
  if (result === undefined) {
    const prompt = messageText(last);
    if (prompt.includes("typo")) {
      return { content: [{ type: "thinking", thinking: "I should look at the file first." }, { type: "text", text: "I'll read the notes first." }, { type: "tool_use", name: "Read", input: { file_path: notes } }] };
    }
    if (prompt.includes("summary")) {
      return { content: [{ type: "tool_use", name: "Write", input: { file_path: join(project, "summary.md"), content: "# Summary\n\nFixed a typo.\n" } }] };
    }
    return { content: [{ type: "text", text: "Nothing to do." }] };
  }
  const call = messages
    .flatMap((message) => (typeof message.content === "string" ? [] : message.content))
    .find((block) => block.type === "tool_use" && block.id === result.tool_use_id);
  switch (call?.name) {
    case "Read":
      return { content: [{ type: "tool_use", name: "Edit", input: { file_path: notes, old_string: "teh", new_string: "the" } }] };
    case "Edit":
      return { content: [{ type: "tool_use", name: "Bash", input: { command: `ls ${MISSING_DIR}`, description: "List the missing folder" } }] };
    case "Bash":
      return { content: [{ type: "text", text: "Fixed the typo. The listing failed: that folder does not exist." }] };
    default:
      return { content: [{ type: "text", text: "Wrote the summary." }] };
  }
}

beforeAll(async () => {
  claude = await claudeCodeBinary();
  if ("skip" in claude) return;
  fake = await startFakeAnthropic(respond);
  home = dirs.make("bc-claude-home-");
  project = dirs.make("bc-claude-project-");
  writeFileSync(join(project, "notes.txt"), "Remember teh milk.\n");
}, 20 * 60_000);

afterAll(async () => {
  await fake?.close();
  dirs.cleanup();
});

async function claudeTurn(prompt: string, resume?: string): Promise<{ session_id: string; is_error: boolean }> {
  const binary = (claude as { path: string }).path;
  const args = ["-p", prompt, "--output-format", "json", "--model", "claude-sonnet-4-5", "--allowedTools", "Read,Edit,Write,Bash", "--permission-mode", "acceptEdits"];
  if (resume !== undefined) args.push("--resume", resume);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    ANTHROPIC_BASE_URL: fake.baseURL,
    ANTHROPIC_API_KEY: "sk-ant-fake-key",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    IS_SANDBOX: "1",
  };
  const { stdout } = await run(binary, args, { cwd: project, env, timeout: 240_000, maxBuffer: 16 << 20 });
  return JSON.parse(stdout) as { session_id: string; is_error: boolean };
}

function transcripts(): string[] {
  const projects = join(home, ".claude", "projects");
  return readdirSync(projects, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".jsonl"))
    .map((name) => join(projects, name));
}

describe("the real Claude Code's transcript", () => {
  it("imports with its tool pairs, files and errors, and re-imports only what the next turn added", async (ctx) => {
    if ("skip" in claude) return ctx.skip(claude.skip);
    const first = await claudeTurn("Please fix the typo in notes.txt, then list the old folder.");
    expect(first.is_error).toBe(false);
    const [file] = transcripts();
    expect(file).toBeDefined();
    expect(readFileSync(join(project, "notes.txt"), "utf8")).toBe("Remember the milk.\n");

    const imported = await d.client.request(SessionImport, { path: file! });
    expect(imported.format).toBe("claude-code-jsonl");
    expect(imported.session.id).toBe(first.session_id);
    expect(imported.updated).toBe(false);
    expect(imported.skippedLines ?? []).toEqual([]);

    const { entries } = await d.client.request(SessionPath, { sessionId: first.session_id });
    const messages = entries.flatMap((entry) => (entry.type === "message" ? [entry.message] : []));
    const human = messages.filter((message) => message.role === "user");
    expect(human.map((message) => message.content)).toEqual(["Please fix the typo in notes.txt, then list the old folder."]);
    const calls = messages.flatMap((message) => (message.role === "assistant" ? message.content.filter((block) => block.type === "toolCall") : []));
    expect(calls.map((call) => call.name)).toEqual(["Read", "Edit", "Bash"]);
    const results = messages.filter((message) => message.role === "toolResult");
    // Every call has its result, in order, on the path the context is built from.
    expect(results.map((result) => [result.toolCallId, result.toolName])).toEqual(calls.map((call) => [call.id, call.name]));
    expect(results.map((result) => result.isError)).toEqual([false, false, true]);
    expect(messages.some((message) => message.role === "assistant" && message.content.some((block) => block.type === "thinking"))).toBe(true);

    const context = await d.client.request(ContextBuild, { sessionId: first.session_id });
    const contextMessages = context.messages as ContextMessage[];
    const fileOps = createFileOps();
    for (const message of contextMessages) extractFileOpsFromMessage(message, fileOps);
    expect(computeFileLists(fileOps)).toEqual({ readFiles: [], modifiedFiles: [join(project, "notes.txt")] });
    const probes = probeMessages(contextMessages);
    expect(probes.errors.map((error) => error.detail)).toEqual([`ls ${MISSING_DIR}`]);
    expect(probes.requests.map((request) => request.text)).toEqual(["Please fix the typo in notes.txt, then list the old folder."]);

    // The next turn, in the same session, then the same file again: only its lines are added.
    const second = await claudeTurn("Now write a summary file.", first.session_id);
    expect(second.session_id).toBe(first.session_id);
    expect(transcripts()).toEqual([file]);
    const again = await d.client.request(SessionImport, { path: file! });
    expect(again.updated).toBe(true);
    expect(again.session.id).toBe(first.session_id);
    expect(again.addedEntries).toBeGreaterThanOrEqual(3);
    expect(again.entryCount).toBe(imported.entryCount + again.addedEntries!);
    const after = await d.client.request(SessionPath, { sessionId: first.session_id });
    const ids = after.entries.map((entry: SessionEntry) => entry.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(0, entries.length)).toEqual(entries.map((entry) => entry.id));
    const added = after.entries.slice(entries.length).flatMap((entry) => (entry.type === "message" ? [entry.message] : []));
    expect(added.filter((message) => message.role === "user").map((message) => message.content)).toEqual(["Now write a summary file."]);
    const addedCalls = added.flatMap((message) => (message.role === "assistant" ? message.content.filter((b) => b.type === "toolCall") : []));
    expect(addedCalls.map((call) => call.name)).toEqual(["Write"]);

    const unchanged = await d.client.request(SessionImport, { path: file! });
    expect(unchanged.addedEntries).toBe(0);
    expect(unchanged.entryCount).toBe(again.entryCount);
  }, 10 * 60_000);
});
