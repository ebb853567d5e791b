/**
 * Text an agent's harness put into a user turn — Claude Code's `<system-reminder>`s, slash-command
 * echoes, local command output, hook output — imported as `custom_message` entries of this type.
 * The context keeps them where the agent sent them (a custom message reaches the LLM as a user
 * message), but they are never the user's words: the retention probes read no custom message as a
 * request or constraint, and summaries see them labelled as injected (compaction/prompts.ts).
 */
export const INJECTED_TEXT_TYPE = "injected-text";

export function isInjectedText(customType: string): boolean {
  return customType === INJECTED_TEXT_TYPE;
}

/** How a summarizer's transcript labels injected text (instead of `[User]`). */
export const INJECTED_TEXT_LABEL = "[Injected by the agent's harness, not the user's words]";

/**
 * The harness's notice that the user interrupted the turn (Claude Code's "[Request interrupted by
 * user]", "… for tool use"): the work stopped there at the user's word.
 */
export function isInterruption(text: string): boolean {
  return /^\s*\[Request interrupted by user\b/.test(text);
}
