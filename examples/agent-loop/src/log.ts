/** One readable stderr line (or a few) per loop event, for the CLI. */
import type { AssistantMessage, ToolCall } from "@base-context/protocol";
import type { AgentEvent, TurnEndAnswer } from "./loop.js";

export function describeEvent(event: AgentEvent): string[] {
  switch (event.type) {
    case "prompt":
      return [`[user] ${clip(event.text, 160)}`];
    case "request":
      return [
        `[model] call ${event.step}: ${event.messages} messages, ${event.tokens} tokens in the daemon's context` +
          (event.compactionId ? ` (starts with the summary of compaction ${event.compactionId})` : ""),
      ];
    case "reply":
      return [describeReply(event.message)];
    case "toolResult": {
      const text = event.result.content.map((block) => (block.type === "text" ? block.text : "[image]")).join("");
      return [`[tool] ${callText(event.call)} → ${event.result.isError ? `error: ${clip(text, 160)}` : `${text.length} characters`}`];
    }
    case "turnEnd":
      return describeTurnEnd(event.answer, event.queuedInputs);
    case "stopped":
      return [`[stopped] ${event.reason}`];
  }
}

function describeReply(message: AssistantMessage): string {
  const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  const calls = message.content.filter((block): block is ToolCall => block.type === "toolCall");
  const usage = message.usage ? `, ${message.usage.input + message.usage.cacheRead} tokens in, ${message.usage.output} out` : "";
  if (message.stopReason === "error" || message.stopReason === "aborted")
    return `[model] ${message.stopReason}: ${message.errorMessage ?? "(no message)"}`;
  const parts = [calls.length > 0 ? `calls ${calls.map(callText).join(", ")}` : `answered (${message.stopReason})`];
  if (calls.length > 0 && text.trim()) parts.push(`says: ${clip(text, 120)}`);
  return `[model] ${parts.join("; ")}${usage}`;
}

function describeTurnEnd(answer: TurnEndAnswer, queuedInputs: number): string[] {
  const lines: string[] = [];
  const { checkpoint } = answer;
  if (checkpoint) {
    const entry = checkpoint.entry;
    const stats = checkpoint.stats;
    const what = stats
      ? `: ${stats.summarizedMessages + stats.turnPrefixMessages} messages summarized, ${stats.keptEntries} entries kept` +
        (stats.tokensBefore !== null ? `, ${stats.tokensBefore} tokens before` : "")
      : "";
    lines.push(
      `[compaction] ${checkpoint.status}${checkpoint.summarizer ? ` by ${checkpoint.summarizer}` : ""}${what}` +
        (entry ? ` (entry ${entry.id})` : "") +
        (checkpoint.message ? ` — ${checkpoint.message}` : ""),
    );
  }
  const facts = [
    ...(answer.usage ? [`context ${answer.usage.tokens} / threshold ${answer.usage.threshold} tokens`] : []),
    ...(queuedInputs > 0 ? [`${queuedInputs} prompt${queuedInputs === 1 ? "" : "s"} queued`] : []),
  ];
  lines.push(
    `[turn/end] followUp ${answer.followUp}${facts.length > 0 ? ` (${facts.join(", ")})` : ""}${answer.message ? ` — ${answer.message}` : ""}`,
  );
  return lines;
}

function callText(call: ToolCall): string {
  const args = Object.entries(call.arguments).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return `${call.name}(${args.join(", ")})`;
}

function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
