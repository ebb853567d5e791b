/**
 * What the summarizing model is asked about an abandoned branch (docs/design.md#tree-navigation), and how its
 * answer becomes the branch_summary text. The wording is ours; the structure is pi's.
 */
import type { ContextMessage, FileOps } from "@base-context/protocol";
import { SUMMARIZATION_SYSTEM_PROMPT, type SummaryRequest, withCustomInstructions, wrapConversation } from "../compaction/prompts.js";
import { formatFileOps } from "../file-ops.js";

export const BRANCH_SUMMARY_PREAMBLE =
  "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/** Branch summaries are short by design: the work they describe was left behind. */
export const BRANCH_SUMMARY_MAX_TOKENS = 2048;

/** pi's text when a branch has nothing to summarize; no model call is made then. */
export const NO_BRANCH_CONTENT = "No content to summarize";

export const BRANCH_SUMMARY_PROMPT = `Write a structured summary of the conversation branch inside the <conversation> tags above, to give context when the conversation comes back to it later.

Follow this format exactly:

## Goal
[What the user was trying to achieve in this branch]

## Constraints & Preferences
- [Requirements, constraints and preferences that were stated]
- [Or "(none)" if there were none]

## Progress
### Done
- [x] [Tasks and changes that were finished]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [What stood in the way, if anything]

## Key Decisions
- **[Decision]**: [Short reason]

## Next Steps
1. [What should happen next to carry this work on]

Keep every section short. Copy file paths, function names and error messages exactly.`;

export interface BranchSummaryRequestInput {
  messages: readonly ContextMessage[];
  customInstructions?: string;
  /** The custom instructions replace the prompt instead of adding a focus to it. */
  replaceInstructions?: boolean;
}

export function buildBranchSummaryRequest(input: BranchSummaryRequestInput): SummaryRequest {
  const custom = input.customInstructions?.trim();
  const instructions =
    input.replaceInstructions === true && custom
      ? custom
      : withCustomInstructions(BRANCH_SUMMARY_PROMPT, input.customInstructions);
  return {
    system: SUMMARIZATION_SYSTEM_PROMPT,
    prompt: wrapConversation(input.messages) + instructions,
    maxTokens: BRANCH_SUMMARY_MAX_TOKENS,
  };
}

/** The branch_summary entry's `summary` and default `details`. */
export function assembleBranchSummary(modelText: string, fileOps: FileOps): { summary: string; details: FileOps } {
  return {
    summary: BRANCH_SUMMARY_PREAMBLE + modelText + formatFileOps(fileOps),
    details: { readFiles: [...fileOps.readFiles], modifiedFiles: [...fileOps.modifiedFiles] },
  };
}
