/** Claude Code's transcripts (`~/.claude/projects/<project>/<session>.jsonl`, and subagents' files). */
import { isJsonObject } from "../json-line.js";
import type { SessionFormat } from "../format.js";
import { ClaudeCodeLineParser } from "./parser.js";

/** Line types only Claude Code writes, each with a field that only its lines have. */
function isClaudeCodeLine(value: Record<string, unknown>): boolean {
  switch (value.type) {
    case "user":
    case "assistant":
    case "system":
    case "progress":
      return typeof value.sessionId === "string" && "parentUuid" in value && typeof value.uuid === "string";
    case "summary":
      return typeof value.summary === "string" && typeof value.leafUuid === "string";
    case "file-history-snapshot":
      return typeof value.messageId === "string" && isJsonObject(value.snapshot);
    case "queue-operation":
      return typeof value.operation === "string" && typeof value.sessionId === "string";
    default:
      return false;
  }
}

/** The start of a line too long to read whole for detection. */
const LINE_START = /^\{"(?:parentUuid|type|leafUuid)"/;

export const claudeCodeFormat: SessionFormat = {
  name: "claude-code-jsonl",
  label: "a Claude Code transcript",
  headerHint: "a user, assistant or system line naming its sessionId",
  checksCompactions: true,
  detect(firstLines) {
    for (const line of firstLines) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        // A line cut for detection: its start still says what wrote it.
        if (LINE_START.test(line) && line.includes('"sessionId":"') && line.includes('"uuid":"')) return true;
        continue;
      }
      if (isJsonObject(value) && isClaudeCodeLine(value)) return true;
    }
    return false;
  },
  createParser: (ids, from) => new ClaudeCodeLineParser(ids, from),
};
