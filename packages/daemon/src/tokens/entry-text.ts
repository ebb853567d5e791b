/**
 * The text of an entry as the LLM sees it — the one thing both token estimators measure
 * (docs/design.md#token-counting). Counting and context building must agree on it, so the
 * visibility rules come from the core (`entryToContextMessage`) and the wrapper texts from the
 * core's `llm-text.ts`, the same functions the context builder uses to build what is sent.
 *
 * Block texts are concatenated without separators: then `text.length` is exactly the character
 * count of pi's `estimateTokens`, which makes `chars4` reproduce it to the character.
 */
import type { ContextMessage, SessionEntry, UserContentBlock } from "@base-context/protocol";
import { bashExecutionText, branchSummaryText, compactionSummaryText, entryToContextMessage } from "@base-context/core";

/**
 * The summary wrappers. Defined once in the core (`llm-text.ts` of @base-context/core), which the context builder
 * imports; re-exported here so counting code names the same strings it counts.
 */
export {
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
} from "@base-context/core";

/** Tokens one image counts, whatever the estimator (docs/design.md#token-counting). */
export const IMAGE_TOKENS = 1200;
/** pi's heuristic: one token per 4 characters, rounded up. */
export const CHARS_PER_TOKEN = 4;

export interface EntryContextText {
  /** The text blocks the LLM reads, concatenated. */
  text: string;
  /** Images in the entry; each counts `IMAGE_TOKENS`. */
  images: number;
}

const NOTHING: EntryContextText = { text: "", images: 0 };

/** What an entry puts in front of the LLM; empty for entries that are not in the context. */
export function entryContextText(entry: SessionEntry): EntryContextText {
  // The context builder places a compaction's summary itself (entryToContextMessage skips it);
  // the entry still stands for that text whenever it is the compaction in force.
  if (entry.type === "compaction") return { text: compactionSummaryText(entry.summary), images: 0 };
  const message = entryToContextMessage(entry);
  return message ? messageContextText(message) : NOTHING;
}

/** What a context message puts in front of the LLM. */
export function messageContextText(message: ContextMessage): EntryContextText {
  switch (message.role) {
    case "user":
    case "toolResult":
    case "custom":
      return contentText(message.content);
    case "assistant": {
      let text = "";
      for (const block of message.content) {
        if (block.type === "text") text += block.text;
        else if (block.type === "thinking") text += block.thinking;
        else text += block.name + JSON.stringify(block.arguments);
      }
      return { text, images: 0 };
    }
    case "bashExecution":
      return message.excludeFromContext === true ? NOTHING : { text: bashExecutionText(message), images: 0 };
    case "compactionSummary":
      return { text: compactionSummaryText(message.summary), images: 0 };
    case "branchSummary":
      return { text: branchSummaryText(message.summary), images: 0 };
  }
}

function contentText(content: string | readonly UserContentBlock[]): EntryContextText {
  if (typeof content === "string") return { text: content, images: 0 };
  let text = "";
  let images = 0;
  for (const block of content) {
    if (block.type === "text") text += block.text;
    else images++;
  }
  return { text, images };
}

/** pi's estimate: ceil(chars / 4), an image as 4,800 characters (= `IMAGE_TOKENS`). */
export function chars4Tokens({ text, images }: EntryContextText): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN) + images * IMAGE_TOKENS;
}
