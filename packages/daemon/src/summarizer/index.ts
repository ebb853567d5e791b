export type { Summarizer, SummaryKind, SummaryRequest, SummaryResult, SummaryUsage } from "./types.js";
export { OpenAISummarizer, type CompletionInput, type CompletionOutput, type OpenAISummarizerOptions } from "./openai.js";
export { ExtractiveSummarizer, EXTRACTIVE_SUMMARIZER_ID, extractiveSummary } from "./extractive/index.js";
export {
  createSummarizer,
  summarizeWithFallback,
  summarizerDetails,
  DEFAULT_SUMMARIZER_MODEL,
  type CreateSummarizerOptions,
  type FallbackOptions,
  type SummarizerDetails,
  type SummarizerSettings,
  type SummaryOutcome,
} from "./create.js";
export { isReasoningModel, stripThinking } from "./model-output.js";
export { DEFAULT_BACKOFF, type BackoffOptions } from "./retry.js";
