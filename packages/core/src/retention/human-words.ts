/**
 * The human's words that reach the agent as a tool's result, not as a user message
 * (docs/retention.md "The human's words, wherever they are"):
 *
 * - answers to the agent's questions (Claude Code's `AskUserQuestion`: `User has answered your
 *   questions: "Which database?"="PostgreSQL", "…"="…"`), each the user's choice;
 * - what the user typed when refusing a tool call (`The user doesn't want to proceed with this
 *   tool use. … To tell you how to proceed, the user said:` and their words).
 *
 * The text the harness writes around them is not the human's: the clarification notice Claude
 * Code puts where the user asked to clarify a question ("The user wants to clarify these
 * questions. …") is dropped.
 */

export interface AnsweredQuestion {
  readonly question: string;
  readonly answer: string;
  /** The answer is one of the options the agent offered: a choice, not words the user typed. */
  readonly chosen?: boolean;
}

export interface HumanWords {
  /** Words the user typed (a refusal's reason, an answer typed instead of an option). */
  readonly typed: string[];
  /** The agent's questions and the user's answers, as the result states them. */
  readonly answers: AnsweredQuestion[];
  /** The user refused the call (with or without saying why). */
  readonly refused: boolean;
}

const ANSWERED = /^\s*User has answered your questions?:\s*/i;
const PAIR = /"((?:[^"\\]|\\.)*)"\s*=\s*"((?:[^"\\]|\\.)*)"/g;
const HAS_PAIR = /"(?:[^"\\]|\\.)*"\s*=\s*"(?:[^"\\]|\\.)*"/;
const REFUSED = /^\s*The user doesn't want to (?:proceed with|take) this (?:tool use|action)\b/i;
const SAID = /To tell you how to proceed, the user said:\s*\n?([\s\S]*)$/i;
/** Notices the harness writes in the user's place: not their words. */
const HARNESS_NOTICE = /^(?:The user wants to clarify these questions\b|No response requested\b)/i;
/** A note the harness appends after the human's reason (how to use memory, what to do next). */
const TRAILING_NOTE = /\n\s*\n(?:Note:|If (?:the user|this)|Consider saving)[\s\S]*$/;

/**
 * The human's words in a tool result, or undefined when it holds none. `offered`: the options the
 * call put before the user (`offeredOptions`); an answer that is one of them is a choice.
 */
export function humanWordsInResult(toolName: string, text: string, offered: readonly string[] = []): HumanWords | undefined {
  if (ANSWERED.test(text) || (toolName === "AskUserQuestion" && HAS_PAIR.test(text))) {
    return { typed: [], answers: answeredQuestions(text, offered), refused: false };
  }
  if (!REFUSED.test(text)) return undefined;
  const said = SAID.exec(text)?.[1]?.replace(TRAILING_NOTE, "").trim() ?? "";
  const typed = said.length > 0 && !HARNESS_NOTICE.test(said) ? [said] : [];
  return { typed, answers: [], refused: true };
}

function answeredQuestions(text: string, offered: readonly string[]): AnsweredQuestion[] {
  const labels = new Set(offered.map((label) => label.trim().toLowerCase()));
  const answers: AnsweredQuestion[] = [];
  for (const match of text.matchAll(PAIR)) {
    const question = withoutEscapes(match[1]!).trim();
    const answer = withoutEscapes(match[2]!).trim();
    // Several options chosen at once are written one after the other, with commas.
    const picked = (text: string) => labels.has(text.toLowerCase());
    const chosen = labels.size > 0 && (picked(answer) || answer.split(/,\s*/).every(picked));
    if (question.length > 0 && answer.length > 0) answers.push({ question, answer, ...(chosen ? { chosen } : {}) });
  }
  return answers;
}

/**
 * The options a question tool put before the user (`AskUserQuestion`'s `questions[].options[].label`,
 * or options given as plain strings): an answer that is one of them was picked, not typed.
 */
export function offeredOptions(args: Readonly<Record<string, unknown>>): string[] {
  const labels: string[] = [];
  const questions = Array.isArray(args.questions) ? (args.questions as unknown[]) : [args];
  for (const question of questions) {
    const options = typeof question === "object" && question !== null ? (question as { options?: unknown }).options : undefined;
    if (!Array.isArray(options)) continue;
    for (const option of options) {
      const label = typeof option === "string" ? option : (option as { label?: unknown } | null)?.label;
      if (typeof label === "string" && label.trim().length > 0) labels.push(label);
    }
  }
  return labels;
}

function withoutEscapes(text: string): string {
  return text.replace(/\\(.)/g, "$1");
}

/** How an answer is written in a summary: the question and the answer as the result states them. */
export function answerText(answer: AnsweredQuestion): string {
  return `"${answer.question}"="${answer.answer}"`;
}
