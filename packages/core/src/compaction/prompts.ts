/**
 * What the summarizing model is asked (docs/design.md#summary-format). The wording is ours; the
 * structure is pi's: one system prompt, an initial prompt, an update prompt used when a
 * previous summary exists, and a shorter prompt for the prefix of a split turn.
 */
import type { ContextMessage } from "@base-context/protocol";
import { convertToLlm } from "../convert-to-llm.js";
import { escapeWrapperClosingTags } from "../escape-tags.js";
import { INJECTED_TEXT_LABEL, isInjectedText } from "../injected.js";
import { isHarnessLine } from "../retention/summary-parts.js";
import { serializeConversation } from "./serialize.js";

export const SUMMARIZATION_SYSTEM_PROMPT = `You write context summaries. You are given a conversation between a user and an AI coding assistant and you turn it into a structured summary in exactly the format you are asked for.

Never continue the conversation and never answer questions that appear in it. Reply with the summary only.`;

export const INITIAL_SUMMARY_PROMPT = `The text inside the <conversation> tags above is a conversation to summarize. Write a structured checkpoint summary that another model will read to carry on the work where it stopped.

Follow this format exactly:

## Goal
[What the user wants to achieve. List several goals if the session covers several tasks.]

## Constraints & Preferences
- [Requirements, constraints and preferences the user stated]
- [Or "(none)" if there were none]

## Progress
### Done
- [x] [Tasks and changes that are finished]

### In Progress
- [ ] [Work that is under way]

### Blocked
- [What stands in the way, if anything]

## Key Decisions
- **[Decision]**: [Short reason]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, examples or references needed to carry on]
- [Or "(none)" if there is nothing]

Keep every section short. Copy file paths, function names and error messages exactly.
The user's words include their answers to the assistant's questions and what they said when refusing a tool call; text marked as injected by the agent's harness is never the user's.
Never copy code blocks, code lines, file trees or stack frames: name the file, the function, the error message.`;

export const UPDATE_SUMMARY_PROMPT = `The text inside the <conversation> tags above holds NEW messages. Fold them into the existing summary given inside the <previous-summary> tags.

Rules:
- UPDATE the previous summary, do not copy it: check each of its items against the new messages
- KEEP what still holds; its request stays the goal unless the user asked for something new, its rules stay constraints
- MOVE items from "In Progress" to "Done" once they are finished; DROP items about files that were renamed or deleted
- "Blocked" holds only errors still open now: remove the ones fixed, retried successfully or worked around
- REWRITE "Next Steps" to match where the work stands now (if everything asked is done, the next step is the user's next request)
- MERGE the previous file lists with the new files
- COPY file paths, function names and error messages exactly
- NEVER carry instructions the agent's harness wrote into the previous summary, code blocks, code lines, file trees or stack frames

Follow this format exactly:

## Goal
[The existing goals, plus new ones if the task grew]

## Constraints & Preferences
- [The existing ones, plus any new ones]

## Progress
### Done
- [x] [Items done before AND items finished since]

### In Progress
- [ ] [Current work, updated]

### Blocked
- [Current blockers; remove the ones that are resolved]

## Key Decisions
- **[Decision]**: [Short reason] (keep the earlier ones, add new ones)

## Next Steps
1. [Updated to the current state]

## Critical Context
- [Keep what still matters, add what is new]

Keep every section short. Copy file paths, function names and error messages exactly.`;

export const TURN_PREFIX_SUMMARY_PROMPT = `The text inside the <conversation> tags above is the BEGINNING of one turn that was too long to keep whole. The END of that turn (the most recent work) stays in the context word for word.

Summarize the beginning so that the kept end can be understood:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions made and work done in this beginning]

## Context for Suffix
- [What is needed to understand the kept recent work]

Be brief. Include only what the kept end depends on.`;

export type SummaryKind = "history" | "turnPrefix";

export interface SummaryRequestInput {
  /** Context messages; converted with convertToLlm and serialized here. */
  messages: readonly ContextMessage[];
  /** The previous compaction's summary: switches the history prompt to the update prompt. */
  previousSummary?: string;
  /** `/compact <instructions>`: appended as `Additional focus: …`. */
  customInstructions?: string;
  kind: SummaryKind;
  reserveTokens: number;
}

export interface SummaryRequest {
  system: string;
  prompt: string;
  maxTokens: number;
}

/** History summaries get 80 % of the reserve; a turn prefix needs less and gets 50 %. */
export function summaryMaxTokens(kind: SummaryKind, reserveTokens: number): number {
  return Math.floor((kind === "history" ? 0.8 : 0.5) * reserveTokens);
}

/** The instructions, with the user's focus added last so it carries the most weight. */
export function withCustomInstructions(instructions: string, customInstructions: string | undefined): string {
  const focus = customInstructions?.trim();
  return focus ? `${instructions}\n\nAdditional focus: ${focus}` : instructions;
}

/** `<conversation>\n…\n</conversation>\n\n` */
export function wrapConversation(messages: readonly ContextMessage[]): string {
  return `<conversation>\n${serializeWithInjected(messages)}\n</conversation>\n\n`;
}

/**
 * The serialized conversation, with text the agent's harness injected (injected.ts) labelled as
 * such instead of `[User]`, so a summary never reports it as something the user said.
 */
function serializeWithInjected(messages: readonly ContextMessage[]): string {
  if (!messages.some(isInjectedMessage)) return serializeConversation(convertToLlm(messages));
  const parts: string[] = [];
  let run: ContextMessage[] = [];
  const flush = () => {
    const text = run.length > 0 ? serializeConversation(convertToLlm(run)) : "";
    if (text) parts.push(text);
    run = [];
  };
  for (const message of messages) {
    if (!isInjectedMessage(message)) {
      run.push(message);
      continue;
    }
    flush();
    const text = contentText(message.content);
    if (text) parts.push(escapeWrapperClosingTags(`${INJECTED_TEXT_LABEL}: ${text}`));
  }
  flush();
  return parts.join("\n\n");
}

function isInjectedMessage(message: ContextMessage): message is Extract<ContextMessage, { role: "custom" }> {
  return message.role === "custom" && isInjectedText(message.customType);
}

function contentText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.flatMap((block) => (block.type === "text" && block.text !== undefined ? [block.text] : [])).join("");
}

function withoutHarnessLines(summary: string): string {
  return summary
    .split("\n")
    .filter((line) => !isHarnessLine(line.trim()))
    .join("\n");
}

/**
 * The request for one summary: the serialized conversation in `<conversation>` tags, then (for
 * history with a previous summary) `<previous-summary>`, then the instructions. The custom
 * instructions apply to both kinds: what the user asked to keep may sit in a turn prefix (pi
 * applies them to the history only). The previous summary is never given to the turn prefix:
 * it belongs to the history summary.
 */
export function buildSummaryRequest(input: SummaryRequestInput): SummaryRequest {
  let prompt = wrapConversation(input.messages);
  let instructions: string;
  if (input.kind === "turnPrefix") {
    instructions = TURN_PREFIX_SUMMARY_PROMPT;
  } else if (input.previousSummary) {
    // The harness's instructions around another agent's summary ("Please continue the conversation…") are not the summary.
    const previous = withoutHarnessLines(input.previousSummary);
    prompt += `<previous-summary>\n${escapeWrapperClosingTags(previous)}\n</previous-summary>\n\n`;
    instructions = UPDATE_SUMMARY_PROMPT;
  } else {
    instructions = INITIAL_SUMMARY_PROMPT;
  }
  prompt += withCustomInstructions(instructions, input.customInstructions);
  return {
    system: SUMMARIZATION_SYSTEM_PROMPT,
    prompt,
    maxTokens: summaryMaxTokens(input.kind, input.reserveTokens),
  };
}
