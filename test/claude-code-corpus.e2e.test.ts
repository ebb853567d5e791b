/**
 * The labelled real Claude Code transcripts of the corpus (../shared/corpus, beside the clone;
 * never copied here) imported through the daemon: entries, tool pairs, files, errors, the human's
 * messages against the labels, Claude Code's own compaction as a compaction entry; then show,
 * tree, search, compact and export on them, and a re-import that adds nothing.
 */
import {
  CompactionRun,
  ContextBuild,
  SessionExport,
  SessionImport,
  SessionPath,
  SessionSearch,
  SessionTree,
  type ContextMessage,
  type SessionEntry,
  type TreeNode,
} from "@base-context/protocol";
import { computeFileLists, createFileOps, extractFileOpsFromMessage, probeMessages } from "@base-context/core";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { useDaemon } from "./support/daemon.js";
import { runCli } from "./support/run-cli.js";

const CORPUS = fileURLToPath(new URL("../../shared/corpus/", import.meta.url));
const SESSIONS = ["258c7280-ae70-4798-800f-63464d01a85d", "ae4a77f8-aedd-4bc1-888f-c94edc91af04", "fa812bfe-b295-4cca-9c2f-fdf01028cb46"];
const present = existsSync(join(CORPUS, `cc-${SESSIONS[0]}.jsonl`));

interface Labels {
  humanMessages: number;
  requests: { text: string }[];
  notRequests: (string | { text: string })[];
  filesModified: string[];
}

type Line = Record<string, unknown> & { type?: string; uuid?: string; isSidechain?: boolean; message?: { content?: unknown } };

const linesOf = (file: string): Line[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as Line);
const blocksOf = (line: Line): Record<string, unknown>[] =>
  Array.isArray(line.message?.content) ? (line.message.content as Record<string, unknown>[]) : [];

const d = useDaemon();

function countNodes(nodes: readonly TreeNode[]): number {
  let count = 0;
  const stack = [...nodes];
  while (stack.length > 0) {
    const node = stack.pop()!;
    count++;
    stack.push(...node.children);
  }
  return count;
}

describe.skipIf(!present)("the corpus's real Claude Code transcripts (skipped when ../shared/corpus is absent)", () => {
  it.each(SESSIONS)("%s: entries, tool pairs, files, errors and Claude Code's compaction", async (sessionId) => {
    const file = join(CORPUS, `cc-${sessionId}.jsonl`);
    const lines = linesOf(file);
    const labels = JSON.parse(readFileSync(join(CORPUS, "labels", `cc-${sessionId}.json`), "utf8")) as Labels;
    const imported = await d.client.request(SessionImport, { path: file });
    expect(imported).toMatchObject({ format: "claude-code-jsonl", updated: false, skippedLines: [] });
    expect(imported.session.id).toBe(sessionId);
    expect(imported.ignoredLines?.progress).toBe(lines.filter((line) => line.type === "progress").length);

    // Every assistant line is an entry of its own id; every tool result block an entry.
    const { entries } = await d.client.request(SessionPath, { sessionId });
    const tree = await d.client.request(SessionTree, { sessionId });
    expect(countNodes(tree.roots)).toBe(imported.entryCount);
    const assistantLines = lines.filter((line) => line.type === "assistant" && line.isSidechain !== true);
    const onPath = new Set(entries.map((entry) => entry.id));
    expect(assistantLines.filter((line) => !onPath.has(line.uuid!))).toEqual([]);

    const messages = entries.flatMap((entry: SessionEntry) => (entry.type === "message" ? [entry.message] : []));
    const calls = messages.flatMap((message) => (message.role === "assistant" ? message.content.filter((block) => block.type === "toolCall") : []));
    const results = messages.filter((message) => message.role === "toolResult");
    const fileResults = lines.flatMap((line) => (line.type === "user" ? blocksOf(line).filter((block) => block.type === "tool_result") : []));
    // Tool pairs: each call on the path has its result on the path, right after the calls of its turn.
    expect(calls.length).toBeGreaterThan(100);
    expect(results.map((result) => result.toolCallId).sort()).toEqual(calls.map((call) => call.id).sort());
    expect(results.length).toBe(fileResults.length);
    for (const result of results) expect(result.toolName).toBe(calls.find((call) => call.id === result.toolCallId)!.name);
    // Errors: every is_error result is one, and only those.
    expect(results.filter((result) => result.isError).length).toBe(fileResults.filter((block) => block.is_error === true).length);

    // Files: every file the labels say was changed through a file tool (not by a shell command) is known as modified.
    const fileOps = createFileOps();
    for (const message of messages) extractFileOpsFromMessage(message as ContextMessage, fileOps);
    const { modifiedFiles } = computeFileLists(fileOps);
    const editedInFile = new Set(
      lines.flatMap((line) =>
        line.type === "assistant" ? blocksOf(line).filter((block) => block.type === "tool_use" && /^(?:Edit|Write|MultiEdit)$/.test(String(block.name))) : [],
      ).map((block) => (block.input as { file_path: string }).file_path),
    );
    const byTool = labels.filesModified.filter((path) => editedInFile.has(path));
    expect(byTool.length).toBeGreaterThan(labels.filesModified.length / 2);
    expect(byTool.filter((path) => !modifiedFiles.includes(path))).toEqual([]);

    // The human's messages: injected text (reminders, command echoes, hook output) is not among them.
    // Each is a message the labels list (a request or not), and each labelled one the file holds is one of them.
    const human = messages.flatMap((message) => (message.role === "user" && typeof message.content === "string" ? [message.content] : []));
    const labelled = [...labels.requests, ...labels.notRequests].map((item) => (typeof item === "string" ? item : item.text));
    expect(human.filter((text) => !labelled.some((label) => text.startsWith(label)))).toEqual([]);
    // The user's words are in user lines, and in the queue for those typed while the agent worked and handed over mid-turn.
    const queued = lines.flatMap((line) => (line.type === "queue-operation" && typeof line.content === "string" ? [line.content] : []));
    const userTexts = [
      ...lines.flatMap((line) => (line.type === "user" && typeof line.message?.content === "string" ? [line.message.content] : [])),
      ...queued,
    ];
    const inFile = labelled.filter((label) => userTexts.some((text) => text.startsWith(label)));
    expect(inFile.filter((label) => !human.some((text) => text.startsWith(label)))).toEqual([]);
    expect(human.length).toBeGreaterThanOrEqual(Math.min(2, labels.humanMessages));
    expect(human.length).toBeLessThanOrEqual(labels.humanMessages);

      // Claude Code's compaction: its boundary as a marker, then one compaction entry whose summary is its
      // summary message, kept from the marker, on the path.
      const summaryLine = lines.find((line) => line.isCompactSummary === true)!;
      const boundary = lines.find((line) => line.subtype === "compact_boundary")!;
      const compactions = entries.filter((entry) => entry.type === "compaction");
      expect(compactions).toEqual([
        expect.objectContaining({
          id: summaryLine.uuid,
          parentId: boundary.uuid,
          summary: summaryLine.message!.content,
          firstKeptEntryId: boundary.uuid,
        }),
      ]);
      const markerAt = entries.findIndex((entry) => entry.id === boundary.uuid);
      expect(entries[markerAt]).toMatchObject({ type: "custom", customType: "claude-code.compact_boundary" });
      // Under the last line before it, or that line's nearest stored ancestor when it is not stored (a metadata line).
      const logicalParent = lines.find((line) => line.uuid === boundary.logicalParentUuid)!;
      expect(entries[markerAt]!.parentId).toBe(entries[markerAt - 1]!.id);
      if (entries[markerAt]!.parentId !== logicalParent.uuid) expect(["progress", "system"]).toContain(logicalParent.type);
      const context = await d.client.request(ContextBuild, { sessionId });
      expect(context.compactionId).toBe(summaryLine.uuid);
      expect((context.messages[0] as ContextMessage).role).toBe("compactionSummary");
      // What Claude Code's summary replaced is probed at import, the way a compaction made here is checked.
      const replaced = entries.slice(0, markerAt);
      const probes = probeMessages(replaced.flatMap((entry) => (entry.type === "message" ? [entry.message as ContextMessage] : [])));
      expect(probes.requests.length).toBeGreaterThan(0);
      expect(probes.errors.length).toBeGreaterThan(0);
      const retention = (compactions[0] as { details?: { retention?: { requests: { total: number }; errors: { total: number } } } }).details
        ?.retention;
      expect(retention?.requests.total).toBeGreaterThan(0);
      expect(retention?.errors.total).toBeGreaterThan(0);

    // A re-import of the unchanged file adds nothing.
    const again = await d.client.request(SessionImport, { path: file });
    expect(again).toMatchObject({ updated: true, addedEntries: 0, entryCount: imported.entryCount });

    // Claude Code's compaction run (its subagent file) is a session of its own, under this one.
    const agent = await d.client.request(SessionImport, { path: join(CORPUS, `cc-${sessionId}.compact-agent.jsonl`) });
    expect(agent.session).toMatchObject({ parentSession: sessionId });
    expect(agent.session.id).toMatch(new RegExp(`^agent-acompact-[0-9a-f]+\\.${sessionId}$`));
  }, 120_000);

  it("searches, compacts and exports an imported transcript", async () => {
    const sessionId = SESSIONS[1]!;
    await d.client.request(SessionImport, { path: join(CORPUS, `cc-${sessionId}.jsonl`) }).catch(() => undefined);
    const search = await d.client.request(SessionSearch, { query: "OpenTelemetry tracing" });
    expect(search.results.map((result) => result.session.id)).toContain(sessionId);

    const exported = await d.client.request(SessionExport, { sessionId, format: "pi-jsonl" });
    const exportedLines = exported.content!.trim().split("\n").map((line) => JSON.parse(line) as { type: string; id: string });
    expect(exportedLines[0]).toMatchObject({ type: "session", id: sessionId });
    const copy = await d.client.request(SessionImport, { content: exported.content!, newId: true });
    expect(copy.format).toBe("pi-jsonl");
    const before = await d.client.request(ContextBuild, { sessionId });
    const copied = await d.client.request(ContextBuild, { sessionId: copy.session.id });
    expect(copied.messages).toEqual(before.messages);

    const run = await d.client.request(CompactionRun, { sessionId, strategy: "summarize" });
    expect(run).toMatchObject({ status: "committed" });
    const after = await d.client.request(ContextBuild, { sessionId });
    expect(after.compactionId).not.toBe(before.compactionId);
    expect(after.tokens).toBeLessThan(before.tokens);
  }, 300_000);

  it("shows and draws an imported transcript on the command line", async () => {
    const sessionId = SESSIONS[2]!;
    const home = d.home;
    const imported = await runCli(["import", join(CORPUS, `cc-${sessionId}.jsonl`)], { home });
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/format: claude-code-jsonl/);
    const show = await runCli(["show", sessionId], { home });
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/compactionSummary/);
    const tree = await runCli(["tree", sessionId], { home });
    expect(tree.code).toBe(0);
    expect(tree.stdout).toMatch(/\[compaction\]/);
  }, 120_000);
});
