export type { Summarizer, SummaryKind, SummaryRequest, SummaryResult, SummaryUsage } from "./types.js";
export {
  OpenAISummarizer,
  OPENAI_DEFAULT_BASE_URL,
  modelEndpoint,
  type CompletionInput,
  type CompletionOutput,
  type OpenAISummarizerOptions,
} from "./openai.js";
export { ExtractiveSummarizer, EXTRACTIVE_SUMMARIZER_ID, extractiveSummary } from "./extractive/index.js";
export {
  ClientModelSummarizer,
  ClientModelError,
  CLIENT_SUMMARIZER_ID,
  clientErrorIsRetryable,
  clientSummarizerId,
  type ClientCompletion,
  type ClientCompletionParams,
  type ClientModel,
} from "./client-model-summarizer.js";
export {
  createSummarizer,
  describeChain,
  summarizerChain,
  summarizeWithFallback,
  summarizerDetails,
  DEFAULT_SUMMARIZER_MODEL,
  type CreateSummarizerOptions,
  type FallbackOptions,
  type FallbackRecord,
  type SummarizerDetails,
  type SummarizerSettings,
  type SummaryOutcome,
} from "./create.js";
export { isReasoningModel, stripThinking } from "./model-output.js";
export { DEFAULT_BACKOFF, type BackoffOptions } from "./retry.js";
export { describeSummarizerSetup, type SetupOptions, type SummarizerSetup } from "./setup.js";
