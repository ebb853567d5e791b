/**
 * One short line about an entry for the tree view: what kind of entry it is and the start of
 * what it says. Whitespace is collapsed; the renderer cuts the text to the terminal width.
 */
import type { AgentMessage, SessionEntry, ToolCall } from "@base-context/protocol";
import { BRANCH_SUMMARY_PREAMBLE } from "@base-context/core";

export type EntryKind =
  | "user"
  | "assistant"
  | "tool result"
  | "tool error"
  | "bash"
  | "custom"
  | "custom message"
  | "pruned"
  | "plugin data"
  | "model"
  | "thinking level"
  | "label"
  | "session name"
  | "compaction"
  | "branch summary";

export interface EntryPreview {
  kind: EntryKind;
  text: string;
}

/** Arguments that say best what a tool call was about, in order of preference. */
const TELLING_ARGUMENTS = ["path", "file", "command", "cmd", "query", "pattern", "url"];

export function entryPreview(entry: SessionEntry): EntryPreview {
  switch (entry.type) {
    case "message":
      return messagePreview(entry.message);
    case "custom_message":
      return { kind: "custom message", text: `${entry.customType}: ${contentText(entry.content)}` };
    case "custom":
      return { kind: "plugin data", text: entry.customType };
    case "model_change":
      return { kind: "model", text: `${entry.provider}/${entry.modelId}` };
    case "thinking_level_change":
      return { kind: "thinking level", text: entry.thinkingLevel };
    case "label":
      return { kind: "label", text: entry.label === undefined ? `${entry.targetId} cleared` : `${entry.targetId} = "${entry.label}"` };
    case "session_info":
      return { kind: "session name", text: entry.name ?? "(cleared)" };
    case "compaction":
      return { kind: "compaction", text: summaryGoal(entry.summary) };
    case "branch_summary":
      return {
        kind: "branch summary",
        text: summaryGoal(
          entry.summary.startsWith(BRANCH_SUMMARY_PREAMBLE) ? entry.summary.slice(BRANCH_SUMMARY_PREAMBLE.length) : entry.summary,
        ),
      };
    case "prune":
      return {
        kind: "pruned",
        text: `${entry.hidden.length} tool output${entry.hidden.length === 1 ? "" : "s"} hidden, ${entry.tokensSaved.toLocaleString("en-US")} tokens saved`,
      };
  }
}

function messagePreview(message: AgentMessage): EntryPreview {
  switch (message.role) {
    case "user":
      return { kind: "user", text: oneLine(contentText(message.content)) };
    case "assistant": {
      const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join(" ");
      const calls = message.content.flatMap((block) => (block.type === "toolCall" ? [callText(block)] : []));
      const parts = [oneLine(text)];
      if (!text.trim() && message.content.some((block) => block.type === "thinking")) parts[0] = "(thinking)";
      if (calls.length > 0) parts.push(`→ ${calls.join(", ")}`);
      if (message.stopReason === "error" || message.stopReason === "aborted")
        parts.push(`(${message.stopReason}${message.errorMessage ? `: ${oneLine(message.errorMessage)}` : ""})`);
      return { kind: "assistant", text: parts.filter((part) => part.length > 0).join(" ") };
    }
    case "toolResult":
      return {
        kind: message.isError ? "tool error" : "tool result",
        text: `${message.toolName}: ${oneLine(contentText(message.content))}`,
      };
    case "bashExecution": {
      const exit = message.cancelled ? " (cancelled)" : message.exitCode ? ` (exit ${message.exitCode})` : "";
      return { kind: "bash", text: `$ ${oneLine(message.command)}${exit}` };
    }
    case "custom":
      return { kind: "custom", text: `${message.customType}: ${oneLine(contentText(message.content))}` };
  }
}

function callText(call: ToolCall): string {
  const key = TELLING_ARGUMENTS.find((name) => typeof call.arguments[name] === "string");
  return key === undefined ? call.name : `${call.name} ${oneLine(String(call.arguments[key]))}`;
}

function contentText(content: string | readonly { type: string; text?: unknown }[]): string {
  if (typeof content === "string") return oneLine(content);
  return oneLine(
    content.map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : `[${block.type}]`)).join(" "),
  );
}

/**
 * What a summary is about: the text of its "## Goal" section (a summary's first line is often a
 * quoted command such as "/mode", the same in every summary of a session), else its gist.
 */
export function summaryGoal(summary: string): string {
  const goal = /^##\s*Goal\s*$([\s\S]*?)(?=^##\s|(?![\s\S]))/m.exec(summary);
  if (goal) {
    const text = summaryGist(goal[1]!);
    if (text.length > 0 && !/^\(.*\)$/.test(text)) return text;
  }
  return summaryGist(summary) || oneLine(summary);
}

/**
 * The first line of a structured summary that says something: not a heading, not a file-list tag,
 * not a placeholder such as "(none)". List markers are dropped.
 */
function summaryGist(summary: string): string {
  for (const raw of summary.split("\n")) {
    const line = raw.trim().replace(/^(?:[-*]\s+(?:\[[ xX]\]\s+)?|\d+\.\s+)/, "");
    if (line.length === 0 || /^#+\s/.test(line) || /^<\/?[\w-]+>$/.test(line) || /^\(.*\)$/.test(line)) continue;
    return oneLine(line);
  }
  return "";
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
