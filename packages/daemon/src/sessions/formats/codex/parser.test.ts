/**
 * The Codex rollout parser on a fixture written from the format's public description: every line
 * type, tool pairs, errors, injected messages, a model change, Codex's compaction, bad lines.
 */
import { readFileSync } from "node:fs";
import type { SessionEntry, ToolResultMessage } from "@base-context/protocol";
import { buildContext, computeFileLists, createFileOps, extractFileOpsFromMessage } from "@base-context/core";
import { describe, expect, it } from "vitest";
import type { ParsedLine } from "../format.js";
import { CodexLineParser } from "./parser.js";

const FIXTURE = new URL("./fixtures/codex-rollout.jsonl", import.meta.url);

interface Parsed {
  header: Extract<ParsedLine, { kind: "header" }>["header"] | undefined;
  entries: { line: number; entry: SessionEntry }[];
  ignored: Map<string, number>;
  skipped: { line: number; reason: string }[];
}

function parseAll(text: string): Parsed {
  const parser = new CodexLineParser();
  const result: Parsed = { header: undefined, entries: [], ignored: new Map(), skipped: [] };
  text.split("\n").forEach((line, index) => {
    const outcome = parser.parse(line, index + 1);
    for (const parsed of Array.isArray(outcome) ? outcome : [outcome]) {
      if (parsed.kind === "header") result.header = parsed.header;
      else if (parsed.kind === "entry") result.entries.push({ line: index + 1, entry: parsed.entry });
      else if (parsed.kind === "ignored") result.ignored.set(parsed.what, (result.ignored.get(parsed.what) ?? 0) + 1);
      else if (parsed.kind === "skip") result.skipped.push({ line: index + 1, reason: parsed.reason });
    }
  });
  return result;
}

const fixture = () => parseAll(readFileSync(FIXTURE, "utf8"));
const messages = (parsed: Parsed) => parsed.entries.flatMap(({ entry }) => (entry.type === "message" ? [entry.message] : []));

describe("Codex rollout lines", () => {
  it("reads session_meta as the header: id, cwd, time, the rest kept", () => {
    const { header } = fixture();
    expect(header).toMatchObject({ id: "7f9f9a2e-1b3c-4f5d-8e7a-000000000001", cwd: "/home/dev/shop", createdAt: "2026-05-02T10:00:00.000Z" });
    expect(header?.extra).toMatchObject({ codex: { cli_version: "0.46.0", model_provider: "openai", git: { branch: "main" } } });
  });

  it("keeps a linear chain: each entry's parent is the one before", () => {
    const { entries } = fixture();
    expect(entries[0]!.entry.parentId).toBeNull();
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.entry.parentId).toBe(entries[i - 1]!.entry.id);
    expect(new Set(entries.map(({ entry }) => entry.id)).size).toBe(entries.length);
  });

  it("marks developer text and injected context as not the user's words", () => {
    const { entries } = fixture();
    const injected = entries.filter(({ entry }) => entry.type === "custom_message");
    const described = injected.map(({ line, entry }) => [line, entry.type === "custom_message" && entry.customType, entry.type === "custom_message" && entry.details]);
    expect(described).toEqual([
      [2, "injected-text", { source: "codex", kind: "developer" }],
      [3, "injected-text", { source: "codex", kind: "user_instructions" }],
      [4, "injected-text", { source: "codex", kind: "environment_context" }],
      [30, "injected-text", { source: "codex", kind: "environment_context" }],
    ]);
    const users = entries.flatMap(({ line, entry }) =>
      entry.type === "message" && entry.message.role === "user" ? [[line, JSON.stringify(entry.message.content)]] : [],
    );
    // Lines 30: the user's requests Codex kept through its compaction.
    expect(users).toEqual([
      [6, expect.stringContaining("The cart total ignores discounts")],
      [28, expect.stringContaining("Write the test, then summarize.")],
      [30, expect.stringContaining("The cart total ignores discounts")],
      [30, expect.stringContaining("Write the test, then summarize.")],
    ]);
  });

  it("pairs every tool call with its result by call_id, names and errors included", () => {
    const all = messages(fixture());
    const calls = all.flatMap((message) => (message.role === "assistant" ? message.content.filter((block) => block.type === "toolCall") : []));
    const results = all.filter((message): message is ToolResultMessage => message.role === "toolResult");
    expect(calls.map((call) => [call.id, call.name])).toEqual([
      ["call_read", "shell"],
      ["call_patch", "apply_patch"],
      ["call_test", "local_shell"],
      ["call_cat", "exec_command"],
      ["call_ls", "exec_command"],
      ["call_patch2", "apply_patch"],
    ]);
    expect(results.map((result) => [result.toolCallId, result.toolName, result.isError])).toEqual([
      ["call_read", "shell", false],
      ["call_patch", "apply_patch", false],
      ["call_test", "local_shell", true],
      ["call_cat", "exec_command", false],
      ["call_ls", "exec_command", true],
      ["call_patch2", "apply_patch", false],
    ]);
    expect(results.map((result) => (result.details as { exitCode?: number } | undefined)?.exitCode)).toEqual([0, 0, 1, 0, 2, undefined]);
    // Older Codex's JSON output is unwrapped to the command's own output.
    expect(results[2]!.content).toEqual([{ type: "text", text: "FAIL src/cart.test.ts\n  no tests found\n" }]);
    expect(calls[2]!.arguments).toEqual({ command: ["npm", "test"], workdir: "/home/dev/shop", timeout_ms: 60000 });
  });

  it("knows the files read and changed from the shell and patch calls", () => {
    const ops = createFileOps();
    for (const message of messages(fixture())) extractFileOpsFromMessage(message, ops);
    expect(computeFileLists(ops)).toEqual({ readFiles: ["package.json"], modifiedFiles: ["src/cart.test.ts", "src/cart.ts"] });
  });

  it("reads reasoning as thinking, keeping the encrypted part", () => {
    const thinking = messages(fixture()).flatMap((message) => (message.role === "assistant" ? message.content : [])).filter((b) => b.type === "thinking");
    expect(thinking).toEqual([{ type: "thinking", thinking: "**Reading the cart code**", thinkingSignature: "gAAAAB-opaque" }]);
  });

  it("turns turn_context into model and effort changes, only when they change", () => {
    const { entries, ignored } = fixture();
    const changes = entries.filter(({ entry }) => entry.type === "model_change" || entry.type === "thinking_level_change");
    const value = (entry: SessionEntry) =>
      entry.type === "model_change" ? entry.modelId : entry.type === "thinking_level_change" ? entry.thinkingLevel : undefined;
    expect(changes.map(({ line, entry }) => [line, entry.type, value(entry)])).toEqual([
      [5, "model_change", "gpt-5-codex"],
      [5, "thinking_level_change", "medium"],
      [31, "model_change", "gpt-5.1-codex"],
      [31, "thinking_level_change", "high"],
    ]);
    expect(ignored.get("turn_context (nothing changed)")).toBe(1);
    const last = messages(fixture()).at(-1);
    expect(last).toMatchObject({ role: "assistant", provider: "openai", model: "gpt-5.1-codex", api: "openai-responses" });
  });

  it("makes Codex's compaction a compaction entry with Codex's summary and the messages it kept", () => {
    const { entries } = fixture();
    const compaction = entries.find(({ entry }) => entry.type === "compaction")!.entry;
    expect(compaction).toMatchObject({
      summary: expect.stringContaining("src/cart.ts was patched"),
      firstKeptEntryId: "cx30",
      tokensBefore: 5100,
    });
    const path = entries.map(({ entry }) => ({ entry, tokens: 1 }));
    const context = buildContext({ path });
    expect(context.compactionId).toBe(compaction.id);
    // The context is the one Codex continued from: its summary, the kept messages, then what followed.
    expect(context.messages.map((message) => message.role)).toEqual(["compactionSummary", "custom", "user", "user", "assistant", "toolResult", "assistant"]);
    // Not the summary a second time: Codex's history holds it as a user message too.
    expect(JSON.stringify(context.messages.slice(1))).not.toContain("src/cart.ts was patched");
  });

  it("takes Codex's preamble off its summary, keeping it in the details", () => {
    const preamble = "Another language model started to solve this problem and produced a summary of its thinking process. Use it:\n";
    const summary = "SUMMARY: notes.md fixed.";
    const history = [{ type: "message", role: "user", content: [{ type: "input_text", text: preamble + summary }] }];
    const parsed = parseAll(
      [
        '{"timestamp":"2026-05-02T10:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/p"}}',
        JSON.stringify({ timestamp: "2026-05-02T10:00:01Z", type: "compacted", payload: { message: preamble + summary, replacement_history: history } }),
      ].join("\n"),
    );
    expect(parsed.entries.map(({ entry }) => entry.type)).toEqual(["custom", "compaction"]);
    expect(parsed.entries[1]!.entry).toMatchObject({ summary, firstKeptEntryId: "cx2", details: { source: "codex", preamble } });
  });

  it("keeps other response items as custom entries, counts event_msg and unknown line types", () => {
    const { entries, ignored } = fixture();
    const custom = entries.filter(({ entry }) => entry.type === "custom").map(({ entry }) => entry.type === "custom" && entry.customType);
    expect(custom).toEqual(["codex.web_search_call", "codex.compaction", "codex.compacted"]);
    // Injected developer text stays in the context, as a custom (not a user) message.
    expect(buildContext({ path: entries.slice(0, 3).map(({ entry }) => ({ entry, tokens: 1 })) }).messages.map((m) => m.role)).toEqual([
      "custom",
      "custom",
      "custom",
    ]);
    expect(ignored.get("event_msg")).toBe(3);
    expect(ignored.get('line type "world_state"')).toBe(1);
  });

  it("skips a bad line with its number and goes on", () => {
    const { skipped, entries } = fixture();
    expect(skipped).toEqual([
      { line: 22, reason: expect.stringMatching(/^invalid JSON/) },
      { line: 25, reason: "not a JSON object" },
    ]);
    expect(entries.some(({ line }) => line === 24)).toBe(true);
  });

  it("refuses lines before session_meta and lines without a payload, with a reason", () => {
    const parsed = parseAll(
      [
        '{"timestamp":"2026-05-02T10:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":"hi"}}',
        '{"timestamp":"2026-05-02T10:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/p"}}',
        '{"timestamp":"2026-05-02T10:00:01Z","type":"response_item"}',
        '{"timestamp":"2026-05-02T10:00:02Z","type":"session_meta","payload":{"id":"s0","cwd":"/q"}}',
        '{"timestamp":"2026-05-02T10:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"nobody","output":"x"}}',
      ].join("\n"),
    );
    expect(parsed.header?.id).toBe("s1");
    expect(parsed.skipped.map((skip) => skip.line)).toEqual([1, 3]);
    expect(parsed.ignored.get("a further session_meta")).toBe(1);
    // A result whose call is not in the file is kept, named "unknown".
    expect(messages(parsed)).toMatchObject([{ role: "toolResult", toolCallId: "nobody", toolName: "unknown" }]);
  });

  it("skips a line nested deeper than a request may nest, and reads tool outputs in every shape", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 200; i++) deep = [deep];
    const meta = '{"timestamp":"2026-05-02T10:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/p"}}';
    const output = (call: string, value: unknown) =>
      JSON.stringify({ timestamp: "2026-05-02T10:00:01Z", type: "response_item", payload: { type: "function_call_output", call_id: call, output: value } });
    const parsed = parseAll(
      [
        meta,
        JSON.stringify({ timestamp: "2026-05-02T10:00:01Z", type: "response_item", payload: { type: "function_call", name: "f", arguments: deep } }),
        output("a", { content: "denied", success: false }),
        output("b", [{ type: "input_text", text: "listing" }, { type: "input_image", image_url: "data:image/png;base64,iVBOR" }]),
        output("c", "execution error: sandbox denied"),
        output("d", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nProcess exited with code 3"),
      ].join("\n"),
    );
    expect(parsed.skipped).toEqual([{ line: 2, reason: expect.stringMatching(/^nested deeper than/) }]);
    const results = messages(parsed) as ToolResultMessage[];
    expect(results.map((result) => [result.toolCallId, result.isError])).toEqual([
      ["a", true],
      ["b", false],
      ["c", true],
      // The first exit code stated is the command's; later text is its output.
      ["d", false],
    ]);
    expect(results[1]!.content).toEqual([
      { type: "text", text: "listing" },
      { type: "image", mimeType: "image/png", data: "iVBOR" },
    ]);
  });

  it("gives the same ids when the same file is read again, so a re-import recognises its entries", () => {
    const text = readFileSync(FIXTURE, "utf8");
    expect(parseAll(text).entries.map(({ entry }) => entry.id)).toEqual(parseAll(text).entries.map(({ entry }) => entry.id));
  });
});
