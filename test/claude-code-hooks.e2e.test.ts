/**
 * Base Context's hooks in the real Claude Code (pinned, from the npm registry:
 * support/claude-code.ts), installed by `base-context claude-code install` into a temporary
 * CLAUDE_CONFIG_DIR, with Claude Code headless (`claude -p`) against a fake Anthropic Messages API
 * on 127.0.0.1 (support/fake-anthropic.ts). A turn with a file edit, a failing command and a user
 * constraint; then `/compact` with the user's own instructions, whose summary (the fake model's)
 * keeps the constraint and drops the error; then one more turn. The fake server sees what Claude
 * Code sends: the summary request carries the hook's instructions after the user's; the first
 * request after the compaction carries the SessionStart hook's additionalContext with the error
 * line, and the PostCompact hook's retention line. The session the hooks imported holds Claude
 * Code's compaction with its retention report.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeCodeBinary, type ClaudeBinary } from "./support/claude-code.js";
import {
  messageText,
  startFakeAnthropic,
  toolResults,
  type AnthropicMessage,
  type AnthropicReply,
  type AnthropicRequestBody,
  type FakeAnthropic,
} from "./support/fake-anthropic.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";
import { testNodeEnv } from "./support/test-node.js";

const run = promisify(execFile);
const dirs = tempDirs();

let claude: ClaudeBinary;
let fake: FakeAnthropic;
let home: string;
let baseContextHome: string;
let project: string;
const MISSING_DIR = "/base-context-no-such-folder";
const CONSTRAINT = "Never touch the tests folder.";
const USER_INSTRUCTIONS = "Focus on the notes file.";

/** Claude Code's request for a summary: the conversation, then its summary prompt as the last user message. */
function isSummaryRequest(request: AnthropicRequestBody): boolean {
  return /provide your summary based on the conversation so far/i.test(messageText(request.messages?.at(-1)));
}

/**
 * What the user typed last: the message's last text block that is not Claude Code's (system
 * reminders, slash-command echoes and output come in the same message).
 */
function prompt(message: AnthropicMessage | undefined): string {
  if (message === undefined) return "";
  if (typeof message.content === "string") return message.content;
  const texts = message.content.flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text.trim()] : []));
  return texts.filter((text) => !text.startsWith("<")).at(-1) ?? "";
}

/**
 * The fake model: a request without tools is one of Claude Code's side requests (titles) and gets
 * a line of text; the summary request gets a summary that keeps the file and the constraint but
 * not the failed listing; otherwise the reply follows the tool result it was sent, or the prompt.
 */
function respond(request: AnthropicRequestBody): AnthropicReply {
  if (!request.tools?.some((tool) => tool.name === "Bash")) return { content: [{ type: "text", text: "Fixing a typo" }] };
  const notes = join(project, "notes.txt");
  if (isSummaryRequest(request)) {
    const summary = `1. Primary Request: fix the typo in ${notes}. ${CONSTRAINT}\n2. Files: ${notes} was edited.\n3. Current Work: done.`;
    return { content: [{ type: "text", text: `<analysis>The user asked for a typo fix.</analysis>\n<summary>${summary}</summary>` }] };
  }
  const messages = request.messages ?? [];
  const last = messages[messages.length - 1];
  const [result] = toolResults(last);
  if (result === undefined) {
    if (prompt(last).includes("typo")) return { content: [{ type: "tool_use", name: "Read", input: { file_path: notes } }] };
    return { content: [{ type: "text", text: "Nothing else to do." }] };
  }
  const call = messages
    .flatMap((message) => (typeof message.content === "string" ? [] : message.content))
    .find((block) => block.type === "tool_use" && block.id === result.tool_use_id);
  switch (call?.name) {
    case "Read":
      return { content: [{ type: "tool_use", name: "Edit", input: { file_path: notes, old_string: "teh", new_string: "the" } }] };
    case "Edit":
      return { content: [{ type: "tool_use", name: "Bash", input: { command: `ls ${MISSING_DIR}`, description: "List the old folder" } }] };
    default:
      return { content: [{ type: "text", text: "Fixed the typo. Listing the old folder failed." }] };
  }
}

beforeAll(async () => {
  claude = await claudeCodeBinary();
  if ("skip" in claude) return;
  fake = await startFakeAnthropic(respond);
  home = dirs.make("bc-claude-home-");
  baseContextHome = dirs.make("bc-claude-bc-home-");
  project = dirs.make("bc-claude-project-");
  writeFileSync(join(project, "notes.txt"), "Remember teh milk.\n");
}, 20 * 60_000);

afterAll(async () => {
  await fake?.close();
  dirs.cleanup();
});

function claudeEnv(): NodeJS.ProcessEnv {
  return {
    ...testNodeEnv(),
    PATH: process.env.PATH,
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    BASE_CONTEXT_HOME: baseContextHome,
    ANTHROPIC_BASE_URL: fake.baseURL,
    ANTHROPIC_API_KEY: "sk-ant-fake-key",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    IS_SANDBOX: "1",
  };
}

async function claudeRun(prompt: string, resume?: string): Promise<{ session_id: string; is_error: boolean }> {
  const binary = (claude as { path: string }).path;
  const args = ["-p", prompt, "--output-format", "json", "--model", "claude-sonnet-4-5", "--allowedTools", "Read,Edit,Write,Bash", "--permission-mode", "acceptEdits"];
  if (resume !== undefined) args.push("--resume", resume);
  const child = run(binary, args, { cwd: project, env: claudeEnv(), timeout: 240_000, maxBuffer: 16 << 20 });
  // Nothing to read on stdin: closed at once, so Claude Code does not wait for piped input.
  child.child.stdin?.end();
  const { stdout } = await child;
  return JSON.parse(stdout) as { session_id: string; is_error: boolean };
}

function transcript(): string {
  const projects = join(home, ".claude", "projects");
  const files = readdirSync(projects, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".jsonl") && !name.includes("subagents"));
  expect(files).toHaveLength(1);
  return join(projects, files[0]!);
}

/** Every text a request sends: the system prompt and each message's text blocks. */
function requestText(request: AnthropicRequestBody): string {
  return JSON.stringify(request.system ?? "") + (request.messages ?? []).map((message) => messageText(message)).join("\n");
}

describe("Base Context's hooks in the real Claude Code", () => {
  it("tell its summary what to keep, check the summary, and give back what it lost", async (ctx) => {
    if ("skip" in claude) return ctx.skip(claude.skip);
    const installed = await runCli(["claude-code", "install"], { home: baseContextHome, env: { CLAUDE_CONFIG_DIR: join(home, ".claude") } });
    expect(installed.code).toBe(0);

    const first = await claudeRun(`Please fix the typo in notes.txt, then list the old folder. ${CONSTRAINT}`);
    expect(first.is_error).toBe(false);
    expect(readFileSync(join(project, "notes.txt"), "utf8")).toBe("Remember the milk.\n");
    const file = transcript();
    expect(readFileSync(file, "utf8")).toContain(`ls ${MISSING_DIR}`);

    const compacted = await claudeRun(`/compact ${USER_INSTRUCTIONS}`, first.session_id);
    expect(compacted.is_error).toBe(false);
    const summaryRequests = fake.requests.flatMap((request) => (request.body && isSummaryRequest(request.body) ? [request.body] : []));
    expect(summaryRequests.length).toBeGreaterThanOrEqual(1);
    const prompt = messageText(summaryRequests[0]!.messages!.at(-1));
    // The user's own instructions first, then the hook's: the constraint and the error's exact first line.
    const users = prompt.indexOf(USER_INSTRUCTIONS);
    const ours = prompt.indexOf("Base Context read this session's transcript");
    expect(users).toBeGreaterThan(0);
    expect(ours).toBeGreaterThan(users);
    const instructions = prompt.slice(ours);
    expect(instructions).toContain(`- User constraint: ${CONSTRAINT}`);
    const errorLine = new RegExp(`- Error \\(ls ${MISSING_DIR}\\): \`(ls: [^\`]*${MISSING_DIR}[^\`]*)\``).exec(instructions);
    expect(errorLine).not.toBeNull();
    expect(instructions).toContain(`- File modified: \`${join(project, "notes.txt")}\``);

      const before = fake.requests.length;
      const next = await claudeRun("What is left to do?", first.session_id);
      expect(next.is_error).toBe(false);
      // The first request of the turn after the compaction: the summary, and the hook's context with the lost error.
      const after = fake.requests
        .slice(before)
        .flatMap((request) => (request.body?.tools?.some((tool) => tool.name === "Bash") ? [request.body] : []));
      expect(after.length).toBeGreaterThanOrEqual(1);
      const sent = requestText(after[0]!);
      expect(sent).toContain("Primary Request: fix the typo");
      // SessionStart ran before Claude Code wrote its summary anywhere: it gave back what must survive.
      const given = /Before this compaction, the conversation held these[\s\S]*?(?=<\/system-reminder>|$)/.exec(sent);
      expect(given).not.toBeNull();
      expect(given![0]).toContain(errorLine![1]);
      expect(given![0]).toContain(`- User constraint: ${CONSTRAINT}`);
      // PostCompact checked the summary it was given: Claude Code shows the line (and, after /compact, sends it).
      expect(sent).toMatch(/Base Context: Claude Code's summary kept [^\n]*0\/1 errors, 1\/1 constraints[^\n]*; lost: error "ls: /);

      // The session the hooks imported here, brought up to date: Claude Code's compaction, checked against the context it replaced.
      const imported = await runCli(["import", file], { home: baseContextHome });
      expect(imported.code).toBe(0);
      const shown = await runCli(["show", first.session_id, "--json"], { home: baseContextHome });
      expect(shown.code).toBe(0);
      const context = JSON.parse(shown.stdout) as {
        summarizedBy?: string;
        retention?: {
          errors: { kept: number; total: number };
          constraints: { kept: number; total: number };
          missing: { errors: string[] };
        };
      };
      expect(context.summarizedBy).toBe("claude-code");
      expect(context.retention?.errors).toEqual({ kept: 0, total: 1 });
      expect(context.retention?.constraints).toEqual({ kept: 1, total: 1 });
      expect(context.retention?.missing.errors).toEqual([errorLine![1]]);
      const tree = await runCli(["tree", first.session_id, "--print", "--filter", "summaries", "--width", "400"], {
        home: baseContextHome,
      });
      expect(tree.stdout).toMatch(/\[compaction\].*\[Claude Code's summary kept .*0\/1 errors, 1\/1 constraints/);

      // The context imported is the one the model read: SessionStart's additional context is in it, as text.
      const shownMessages = (context as unknown as { messages: { message: { role: string; customType?: string; content: unknown } }[] })
        .messages;
      const injected = shownMessages.filter(({ message }) => message.role === "custom" && message.customType === "injected-text");
      expect(injected.map(({ message }) => JSON.stringify(message.content)).join("\n")).toContain("Before this compaction, the conversation held these");

      // A second /compact: the error the first summary lost is still asked for, from what SessionStart gave back.
      const beforeSecond = fake.requests.length;
      const second = await claudeRun(`/compact ${USER_INSTRUCTIONS}`, first.session_id);
      expect(second.is_error).toBe(false);
      const secondSummary = fake.requests
        .slice(beforeSecond)
        .flatMap((request) => (request.body && isSummaryRequest(request.body) ? [request.body] : []));
      expect(secondSummary.length).toBeGreaterThanOrEqual(1);
      const secondPrompt = messageText(secondSummary[0]!.messages!.at(-1));
      const asked = secondPrompt.slice(secondPrompt.indexOf("Base Context read this session's transcript"));
      expect(asked).toContain(`- User constraint: ${CONSTRAINT}`);
      expect(asked).toContain(`\`${errorLine![1]}\``);
      // Not because the turn in between failed again: the listing ran once, before the first compaction.
      const listings = readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line.includes('"type":"tool_use"') && line.includes(`"command":"ls ${MISSING_DIR}"`));
      expect(listings).toHaveLength(1);
    },
    15 * 60_000,
  );
});
