/**
 * The text pi shows the LLM for messages that are not plain user/assistant/tool messages
 * (docs/design.md#what-a-context-holds).
 */
import type { BashExecutionMessage } from "@base-context/protocol";
import { escapeWrapperClosingTags } from "./escape-tags.js";

export const COMPACTION_SUMMARY_PREFIX =
  "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
export const COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
export const BRANCH_SUMMARY_PREFIX =
  "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
// pi closes the branch wrapper without a newline; kept so contexts match pi's byte for byte.
export const BRANCH_SUMMARY_SUFFIX = "</summary>";

/** A `!cmd` run by the user, as the user message the LLM sees. */
export function bashExecutionText(message: BashExecutionMessage): string {
  let text = `Ran \`${message.command}\`\n`;
  text += message.output ? `\`\`\`\n${message.output}\n\`\`\`` : "(no output)";
  if (message.cancelled) {
    text += "\n\n(command cancelled)";
  } else if (message.exitCode !== null && message.exitCode !== undefined && message.exitCode !== 0) {
    text += `\n\nCommand exited with code ${message.exitCode}`;
  }
  if (message.truncated && message.fullOutputPath) {
    text += `\n\n[Output truncated. Full output: ${message.fullOutputPath}]`;
  }
  return text;
}

/** The compaction summary as the LLM sees it; a `</summary>` inside cannot end the wrapper. */
export function compactionSummaryText(summary: string): string {
  return COMPACTION_SUMMARY_PREFIX + escapeWrapperClosingTags(summary) + COMPACTION_SUMMARY_SUFFIX;
}

export function branchSummaryText(summary: string): string {
  return BRANCH_SUMMARY_PREFIX + escapeWrapperClosingTags(summary) + BRANCH_SUMMARY_SUFFIX;
}
