export type { Encoding, Estimator, TokenCounter, TokenCounterOptions } from "./counter.js";
export { createTokenCounter, DEFAULT_COUNTER_POLICY, type CounterPolicy } from "./create-counter.js";
export {
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  CHARS_PER_TOKEN,
  chars4Tokens,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
  entryContextText,
  IMAGE_TOKENS,
  messageContextText,
  type EntryContextText,
} from "./entry-text.js";
