/**
 * Reading the user's words with precision first (docs/retention.md "Requests and constraints"):
 * which messages ask for work, and which sentences set a standing rule. Where a reading is unsure
 * it says so ("unsure"), and the item is not counted: a missed item costs less than a junk line
 * that repair and every later summary would repeat.
 */
import { sentences } from "./text.js";

export type Reading = "yes" | "no" | "unsure";

const TRIVIAL =
  /^(?:y|yes|yep|yeah|ok|okay|k|sure|go|go on|go ahead|continue|proceed|do it|please do|please continue|keep going|thanks|thank you|thx|lgtm|sounds good|great|nice|perfect|correct|right|no|nope|done|retry|again|try again)[.!]*$/i;
// "Great. Now also…": acknowledgements before the actual request.
const LEADING_FILLER =
  /^(?:(?:great|thanks|thank you|ok|okay|nice|perfect|cool|good|awesome|sure|alright|yes|yep|yeah|hm+|well)\b[.!,]*\s+)+/i;
/** Praise, thanks, relief: the user reacting, not asking. */
const REACTION =
  /^(?:(?:wow|omg|omfg|lol|haha|jesus|damn|sweet|awesome|amazing|excellent|great|nice|perfect|cool|thanks|thank you)\b.*(?:works|worked|work now|monster|genius|amazing|great|nice|thanks|thank you)[.!]*$|(?:it|everything|all|that) (?:works|worked)(?: now)?[.!]*$)/i;
/** A question about the state of things ("did you push?", "are we all committed?", "what did I run?"). */
const STATE_QUESTION =
  /^(?:did|do|does|have|has|is|are|was|were|what did|what have|what happened|why did|where did|how did|i don't understand)\b[^?]*\?$/i;
/** Verbs that open a request for work (imperative, possibly after "please", "now", "then"). */
const WORK_VERB =
  /^(?:(?:please|now|then|also|and|so|just|first|next|pls|plz|ok|okay|alright|yeah|yes)[,\s]+)*(?:read|reda|re-?read|look|check|create|make|add|remove|delete|del|drop|fix|implement|write|rewrite|update|use|put|move|rename|copy|port|refactor|change|modify|set|adjust|tackle|work|continue|resume|finish|start|run|test|build|install|commit|push|release|publish|deploy|revert|undo|kill|stop|open|show|find|search|investigate|debug|explain|review|clean|split|merge|extract|replace|convert|migrate|document|bump|upgrade|try|let's|lets|do(?! (?:we|you|i|they)\b)|go(?! (?:we|you)\b)|handle|support|wire|hook|integrate|generate|improve|simplify|optimi[sz]e|ensure|verify|prove|demonstrate|double-check|figure|help|give|tell|send|prepare|draft|plan|design|build|configure|setup|set up|log|print|call|list|return|cache|retry|parse|validate|store|save|load|fetch|sort|filter|limit|expose|emit|pass|wrap|throw|catch|raise|skip|ignore|disable|enable|allow|block|reject|accept|keep|include|exclude|link|sign|encrypt|hash|index|paginate|stream|batch|schedule|track|measure|benchmark|profile|lint|format|annotate|describe|comment|translate|localize|style|align|resize|scale|hide|collapse|expand|highlight|mark|tag|label|group|count|compute|calculate|estimate|compare|backport|rebase|squash|address|resolve|close|reopen|ship|reduce|increase|decrease|raise|lower|shorten|lengthen|inline|dedupe|deduplicate|memoize|sanitize|escape|normalize|rewrite|restore|reset|clear|purge|archive|mock|stub|seed|populate|bootstrap|scaffold|initialize|init|upload|download|sync|import|export|serve|restart|reload|refresh|rerun|re-run|redo|regenerate|rebuild|reinstall|recreate|reformat|make it|remoev|cerate|craete)\b/i;
/** Asking the agent to do or find something, as a question or a wish ("do you have a list of the slow queries?" asks it to get one). */
const ASK =
  /\b(?:can you|could you|would you|will you|you can|do you (?:have|know)|is there (?:a|any) way|is it possible|please|i want|i'd like|i need you|we need|we still need|we should(?! be (?:good|fine|ok|okay|done|ready|set)\b)|we can|we could|could we|can we|shall we|let's|lets|any idea|how can we|how do we|how would we|know how to|should we|do we need|we want|make sure|try to|go ahead|needs to (?!be\b))\b/i;
/** "X should be Y", "it should stay as is": the user says how the thing they work on must end up. */
const DESIRED_STATE = /\b(?:should|must)(?: not| never| always)? (?:be|stay|look|use|show|have|return|go|display)\b/i;
const SETTLED = /\bwe should be (?:good|fine|ok|okay|done|ready|set)\b/i;

/** A user message that states a goal: not a slash command, not one word, not an acknowledgement. */
export function isGoalRequest(text: string): boolean {
  return readRequest(text) === "yes";
}

/**
 * Whether a user message asks for work: "yes" for an imperative or a question asking the agent to
 * do or find something; "no" for slash commands, one-word replies, thanks and praise, questions
 * about state, pasted output without an ask; "unsure" for the rest (a statement, a remark).
 */
export function readRequest(text: string): Reading {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.startsWith("/") || !/\s/.test(trimmed) || TRIVIAL.test(trimmed)) return "no";
  if (isSummaryText(trimmed)) return "no";
  const said = ownSentences(trimmed);
  if (said.length === 0) return "no";
  const first = said[0]!.replace(LEADING_FILLER, "");
  if (said.every((s) => REACTION.test(s.replace(LEADING_FILLER, "")) || TRIVIAL.test(s))) return "no";
  if (said.length === 1 && STATE_QUESTION.test(first) && !ASK.test(first)) return "no";
  if (said.some((s) => clauses(s).some((c) => WORK_VERB.test(c)) || ASK.test(s))) return "yes";
  // A standing rule, or how the thing should end up ("the footer should be dimmer"), asks for work too.
  // "…that should never happen": whatever the story around it, the user wants it not to.
  if (said.some((s) => readConstraint(s) !== "no" || STRONG_RULE.test(s) || (DESIRED_STATE.test(s) && !SETTLED.test(s)))) return "yes";
  return "unsure";
}

/** The clauses of a sentence, each without the acknowledgement before it ("ok, so read it" → "so read it"). */
function clauses(sentence: string): string[] {
  return sentence
    .split(/[,;:—–]\s+|\s+-\s+/)
    .map((c) => c.trim().replace(LEADING_FILLER, ""))
    .filter((c) => c.length > 0);
}

/** Verbs that only say to go on with the work in hand ("keep going till the end", "resume"). */
const GO_ON = /^(?:(?:please|now|then|so|ok|okay|yes|yeah|just)[,\s]+)*(?:continue|resume|proceed|carry on|keep going|go on|go ahead)\b/i;

/**
 * Whether a message opens with an imperative that names work of its own ("try Paddle instead",
 * "fix the build"), not one that says to go on ("keep going till the end") nor a reply to the
 * agent ("you do it", "the second one", "2").
 */
export function opensWithWork(text: string): boolean {
  const first = (ownSentences(text)[0] ?? "").replace(LEADING_FILLER, "");
  return WORK_VERB.test(first) && !GO_ON.test(first);
}

/** The request without the acknowledgement before it ("Great. Now add…" → "Now add…"). */
export function requestText(text: string): string {
  const trimmed = text.trim();
  const stripped = trimmed.replace(LEADING_FILLER, "");
  return stripped.length > 0 ? stripped.charAt(0).toUpperCase() + stripped.slice(1) : trimmed;
}

/** Summaries that reached a range as messages (wrapped for the LLM, or the summary roles). */
export function isSummaryText(text: string): boolean {
  return text.includes("<summary>") && /^## (?:Goal|Original Request)\b/m.test(text);
}

// ---- pasted text ----------------------------------------------------------------------------------

/** A line of output the user pasted: a prompt, a stack frame, an error line, JSON, a log line, a path alone. */
export function looksPasted(line: string): boolean {
  // The start of a line says what it is; a long line is not scanned whole (bounded regex work).
  const t = (line.length > 600 ? line.slice(0, 600) : line).trim();
  if (t.length === 0) return false;
  return (
    /^(?:[➜$%>#]\s|\{|\[|at\s+\S+\s*\(|at\s+\S+:\d|\d{4}-\d\d-\d\d[T ]|\[\w+\]\s|npm (?:ERR|WARN)|warning:|error(?:\[|:)|Error:|\w*(?:Error|Exception):|Traceback|File "|\s*\^)/.test(
      t,
    ) ||
    /\b(?:messages|content)\.\d+\b|"\w+":\s*["{[\dtfn]|\b\w+\.\w+:\d+(?::\d+)?\b|\bat\s+\w+\s+\(|(?:^|\s)\/(?:Users|home|var|tmp|opt)\/\S+$/.test(t) ||
    /^[^\s]+$/.test(t) ||
    // A dropped file's path (quoted, spaces and all), a diff line with its number, a spinner or a status bar.
    /^['"]?(?:~|\/|[A-Z]:\\)[^'"]*['"]?$/.test(t) ||
    /^[+-]?\d+\s+[-+]\s/.test(t) ||
    /^[\u2800-\u28ff\u2500-\u257f]/.test(t) ||
    /[↑↓]\d/.test(t)
  );
}

/**
 * The user's own words of a message: lines they pasted (output, logs, stack traces, JSON) and
 * code fences left out, soft-wrapped lines joined so a sentence is never cut in half.
 */
export function ownWords(text: string): string {
  const out: string[] = [];
  let inFence = false;
  let pastedRun = false;
  const seen = new Set<string>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    // A line that comes again is output (a log repeating itself), not something typed twice.
    const again = line.length > 0 && seen.has(line);
    seen.add(line);
    if (line.startsWith("```")) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    if (line.length === 0) {
      out.push("");
      pastedRun = false;
      continue;
    }
    // A pasted block: its lines, and the indented or unpunctuated lines that follow them.
    if (again || (looksPasted(line) && (out.length > 0 || pastedRun || text.includes("\n")))) {
      // "ghostty:" before a paste labels the paste, it is not a sentence of its own.
      let label = out.length - 1;
      while (label >= 0 && out[label] === "") label--;
      if (label >= 0 && /:$/.test(out[label]!) && out[label]!.split(/\s+/).length <= 5) out.splice(label, 1);
      pastedRun = true;
      out.push("");
      continue;
    }
    if (pastedRun && (/^\s/.test(raw) || !/[a-z]{3,}\s+[a-z]{3,}/i.test(line))) continue;
    pastedRun = false;
    const previous = out[out.length - 1];
    // A line that continues the previous sentence (no end punctuation there, lower case here).
    if (previous !== undefined && previous.length > 0 && !/[.!?:;]$/.test(previous) && /^[a-z(]/.test(line) && !/^[-*+•]\s/.test(raw.trim()))
      out[out.length - 1] = `${previous} ${line}`;
    else out.push(line);
  }
  return out.join("\n").trim();
}

// ---- constraints ------------------------------------------------------------------------------------

/** Rules whatever the hedging: must, never (not "never mind"), always, "no X!", "don't" opening a clause, "use X, not Y". */
const STRONG_RULE =
  /\b(?:must|mustn't|never(?! mind\b)|always)\b|(?:^|[,;:—–-]\s*|\b(?:please|and|but|so)\s+)(?:don't|dont|do not|never(?! mind\b))\s+\w+|^no\s+[\w-]+(?:\s+[\w-]+){0,3}!+$|^(?:\w+\s+){0,3}use\b[^.!?]*,\s*(?:not|no|never)\s+[\w`'"]|\b(?:not allowed|forbidden|under no circumstances)\b/i;
/** Weaker markers: a rule only in a plain statement (no hedge, no bug description, no value assignment). */
const WEAK_RULE =
  /\b(?:should|shouldn't|should not)\s+(?!be\b|stay\b|look\b|show\b|have\b|work\b|display\b|go\b)\w+|\b(?:avoid|prefer|stick to|instead of|only (?:use|ever|touch|change|modify|edit|run)|keep (?:the|it|them|using)|without (?:changing|touching|breaking))\b/i;
const HEDGE = /^(?:i think|i guess|i suppose|i believe|i don't think|i dont think|maybe|perhaps|probably|not sure|it seems|looks like|i wonder)\b/i;
/** "It shows X but should show Y", "I selected it and got a crash": what went wrong, not a rule. */
const BUG_STORY =
  /\b(?:but (?:it |that |this )?(?:shows|is|was|does|doesn't|did)|instead it|got an? (?:crash|error)|i (?:\w+ed|got|saw|ran|tried|did)\b|(?:doesn't|does not|didn't|won't|isn't|is not) (?:work|change|update|render|show)|still (?:looks|shows|fails|broken))/i;
/** An answer to the assistant, about the current step ("no, the block stays", "yes, the old one"). */
const ANSWER = /^(?:no|nope|yes|yeah|yep|ok|okay|right|correct|wait|actually|hm+|well)\s*[,.!—–-]\s/i;

/**
 * How a sentence of a user message reads as a standing rule: "yes" (a whole sentence with a
 * strong marker, or a plain statement with a weak one), "unsure" (a marker, but hedged, an answer,
 * or a fragment), "no" (no marker, a question, a bug description, pasted text).
 */
export function readConstraint(sentence: string): Reading {
  const s = sentence.trim();
  const words = s.split(/\s+/).length;
  if (words < 3 || words > 45 || s.endsWith("?") || looksPasted(s)) return "no";
  const strong = STRONG_RULE.test(s);
  const weak = !strong && WEAK_RULE.test(s);
  if (!strong && !weak) return "no";
  // "I selected it and got a crash, that should never happen": a bug report, even with "never" in it.
  if (BUG_STORY.test(s) && !/\bmust\b/i.test(s)) return "no";
  // "No, …", "Wait, …": an answer about the current step, unless it states a rule outright (must, never, always).
  if (ANSWER.test(s) && !(strong && /\b(?:must|never|always)\b/i.test(s))) return "unsure";
  if (weak && HEDGE.test(s.replace(LEADING_FILLER, ""))) return "unsure";
  return "yes";
}

/** The sentences of a user message that constrain the work ("never…", "always…", "must…"). */
export function constraintSentences(text: string): string[] {
  return ownSentences(text).filter((s) => readConstraint(s) === "yes");
}

/** The sentences that have a rule's marker but could not be judged a rule (reported as unjudged). */
export function unsureConstraintSentences(text: string): string[] {
  return ownSentences(text).filter((s) => readConstraint(s) === "unsure");
}

// Each user message is read several times in a row (request, constraints, unsure ones): split it once.
let lastText: string | undefined;
let lastSentences: string[] = [];

/** The sentences of the user's own words of a message. */
export function ownSentences(text: string): string[] {
  if (text !== lastText) {
    lastSentences = sentences(ownWords(text));
    lastText = text;
  }
  return lastSentences;
}
