/**
 * The words for the two token totals a context has, the same in every command, so nobody has to
 * guess why two numbers differ:
 * - the count: each message counted with the tokenizer (tokens.encoding) and summed; what
 *   `show`, `compact` and context/build report;
 * - the estimate, made as pi makes it: the usage the model last reported plus about 4 characters
 *   a token for what came after; what the compaction threshold is checked against
 *   (context/usage) and what a compaction stores as `tokensBefore`.
 */
import type { Settings } from "@base-context/protocol";

export function countMethod(tokens: Settings["tokens"]): string {
  return tokens.estimator === "exact" ? `counted with ${tokens.encoding}` : "estimated at 4 characters a token (tokens.estimator chars4)";
}

export const ESTIMATE_METHOD =
  "pi's estimate: the model's last reported usage + 4 characters a token after it; the compaction threshold is checked against it";
