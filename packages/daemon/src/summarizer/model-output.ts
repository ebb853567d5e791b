/** Small pure helpers about models and their answers, kept apart so they are easy to test. */

/**
 * OpenAI reasoning models (o1, o3, o4-mini, gpt-5…) reject `max_tokens` and sampling parameters;
 * they take `max_completion_tokens`. A provider prefix (`openai/o3-mini`) is ignored.
 */
export function isReasoningModel(model: string): boolean {
  const name = (model.split("/").pop() ?? model).toLowerCase();
  return /^o\d+(?:-|$)/.test(name) || name.startsWith("gpt-5");
}

const THINK_BLOCK = /<(think|thinking)>[\s\S]*?<\/\1>/gi;
const THINK_CLOSE = /<\/(?:think|thinking)>/i;
const THINK_OPEN = /<(?:think|thinking)>/i;

/**
 * Removes reasoning that open-weight models (DeepSeek-R1, Qwen…) write into the answer itself.
 * Three shapes: complete `<think>…</think>` blocks; a lone closing tag when the chat template
 * opened the block in the prompt (everything before it is reasoning); a lone opening tag when the
 * answer was cut off while still reasoning (everything after it is reasoning).
 */
export function stripThinking(text: string): string {
  let answer = text.replace(THINK_BLOCK, "");
  const close = THINK_CLOSE.exec(answer);
  if (close) answer = answer.slice(close.index + close[0].length);
  const open = THINK_OPEN.exec(answer);
  if (open) answer = answer.slice(0, open.index);
  return answer.trim();
}
