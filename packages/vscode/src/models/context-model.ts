/**
 * "What the model sees": the context `context/build` returns for a session's leaf (or another
 * entry), as a read-only Markdown document. One section per message, in order, each with its role,
 * its stored token count and the text the model reads (as `base-context show` prints it:
 * compaction and branch summaries with the preamble the model gets, tool calls with their
 * arguments, pruned tool outputs marked), verbatim in a fenced block so no message can change the
 * document's structure.
 */
import type { ContextBuild, ContextMessage, RetentionReport, ResultOf } from "@base-context/protocol";
import { formatRetention } from "@base-context/core";
import { viewNativeMessage } from "@base-context/daemon/views";
import { fenced, formatCount, oneLine, plural } from "./format.js";
import { lostCount, lostLines } from "./tree-model.js";

export type BuiltContext = ResultOf<typeof ContextBuild>;

export interface ContextDocumentInput {
  sessionId: string;
  title: string;
  /** The entry the context was built for. */
  leafId: string | null;
  /** Whether that is the session's current leaf (else: "as it was at entry …"). */
  atCurrentLeaf: boolean;
  /** Native messages, built with `messageTokens: true`. */
  context: BuiltContext;
  /** The retention report of the compaction in force (`context.compactionId`), when it has one. */
  retention?: RetentionReport;
  /** Another agent that wrote that compaction's summary ("Claude Code"). */
  summarizedBy?: string;
}

export function contextDocument(input: ContextDocumentInput): string {
  const { context } = input;
  const messages = context.messages as ContextMessage[];
  const counts = context.messageTokens ?? [];
  const pruned = new Set(context.pruned?.toolCallIds ?? []);
  const out: string[] = [`# What the model sees: ${oneLine(input.title)}`, ""];
  const where = input.leafId === null ? "none (the session is empty)" : `\`${input.leafId}\`${input.atCurrentLeaf ? " (the current leaf)" : " (not the current leaf)"}`;
  out.push(
    `- session: \`${input.sessionId}\``,
    `- leaf: ${where}`,
    `- ${plural(messages.length, "message")}, ${plural(context.tokens, "token")} (each message's stored count)`,
    `- model: ${context.model ? `${context.model.provider}/${context.model.modelId}` : "none named"}, thinking ${context.thinkingLevel}`,
  );
  const summaries = summaryCounts(messages);
  if (summaries.length > 0) out.push(`- holds ${summaries.join(" and ")}`);
  if (context.compactionId !== undefined) {
    const by = input.summarizedBy ? ` (${input.summarizedBy}'s summary)` : "";
    const kept = input.retention ? `: ${formatRetention(input.retention)}` : "";
    out.push(`- compaction in force: \`${context.compactionId}\`${by}${kept}`);
  }
  if (context.pruned) {
    out.push(
      `- ${plural(context.pruned.entryIds.length, "tool output")} pruned (marked ✂ below): the model sees a one-line stub instead, ` +
        `which saves ${formatCount(context.pruned.tokensSaved)} tokens; the stored outputs are unchanged`,
    );
  }
  out.push("");
  if (input.retention && lostCount(input.retention) > 0) out.push("What that compaction's summary lost:", "", ...lostLines(input.retention), "");
  if (messages.length === 0) out.push("The context is empty: the model sees no message of this session.", "");
  messages.forEach((message, index) => {
    const view = viewNativeMessage(message, counts[index] ?? 0);
    const isPruned = message.role === "toolResult" && pruned.has(message.toolCallId);
    const tokens = counts[index] === undefined ? "" : ` · ${plural(view.tokens, "token")}`;
    out.push("---", "", `## ${index + 1} · ${view.label}${tokens}${isPruned ? " · ✂ pruned" : ""}`, "", fenced(view.text, "text"), "");
  });
  out.push("---", "", `Total: ${plural(context.tokens, "token")} in ${plural(messages.length, "message")}.`, "");
  return out.join("\n");
}

/** "1 compaction summary", "2 branch summaries": the summaries standing in the context. */
function summaryCounts(messages: readonly ContextMessage[]): string[] {
  const compactions = messages.filter((message) => message.role === "compactionSummary").length;
  const branches = messages.filter((message) => message.role === "branchSummary").length;
  return [
    ...(compactions > 0 ? [plural(compactions, "compaction summary", "compaction summaries")] : []),
    ...(branches > 0 ? [plural(branches, "branch summary", "branch summaries")] : []),
  ];
}
