/**
 * Text helpers for the extractive summarizer. Everything here is linear in the input and avoids
 * backtracking-prone patterns: a 200k-token range must be summarized in well under a second.
 */

/** Collapses whitespace and cuts to `max` characters on a word boundary when possible. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`;
}

/** The first line that says something, clipped. */
export function firstLine(text: string, max = 200): string {
  for (const line of text.split("\n", 50)) {
    if (line.trim().length > 0) return clip(line, max);
  }
  return "";
}

const ABBREVIATIONS = /\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|no|fig)\.$/i;

/**
 * Sentences of prose. Splits after `.`, `!`, `?` followed by whitespace, and at line breaks
 * (bullets and short lines are sentences of their own). Code fences are skipped: their content
 * is not prose and would produce noise.
 */
export function sentences(text: string): string[] {
  const out: string[] = [];
  let inFence = false;
  for (const rawLine of text.split("\n")) {
    const line = rawLine.trim();
    if (line.startsWith("```")) {
      inFence = !inFence;
      continue;
    }
    if (inFence || line.length === 0) continue;
    const bare = line.replace(/^(?:[-*+•]|\d+[.)])\s+/, "");
    let start = 0;
    for (let i = 0; i < bare.length; i++) {
      const ch = bare[i];
      if ((ch === "." || ch === "!" || ch === "?") && (i + 1 === bare.length || bare[i + 1] === " ")) {
        const candidate = bare.slice(start, i + 1);
        if (ch === "." && ABBREVIATIONS.test(candidate)) continue;
        push(out, candidate);
        start = i + 1;
      }
    }
    push(out, bare.slice(start));
  }
  return out;
}

function push(out: string[], sentence: string): void {
  const trimmed = sentence.trim();
  if (trimmed.length > 1) out.push(trimmed);
}

const URL_RE = /^https?:\/\/[^\s<>"'`)\]]+$/;
const CODE_SPAN_RE = /`([^`\n]{1,160})`/g;
const KNOWN_EXTENSIONS =
  "ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|md|mdx|py|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|sql|yaml|yml|toml|ini|cfg|conf|sh|bash|zsh|ps1|css|scss|less|html|htm|vue|svelte|txt|csv|xml|lock|env|proto|graphql|gql|prisma|tf|dockerfile|gradle";
const SLASH_PATH_RE = /^(?:~\/|\.{1,2}\/|\/)?(?:[\w@.+-]+\/)+[\w@.+-]*$/;
const BARE_FILE_RE = new RegExp(`^[\\w.-]*[\\w-]\\.(?:${KNOWN_EXTENSIONS})$`, "i");
const EXTENSION_RE = new RegExp(`\\.(?:${KNOWN_EXTENSIONS})$`, "i");
// camelCase, PascalCase with an inner capital, snake_case, SCREAMING_CASE: names worth keeping verbatim.
const IDENTIFIER_RE =
  /^(?:[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Za-z][a-z0-9]*(?:_[A-Za-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)$/;
/** Longer "words" are data (base64, minified code), not names; skipping them keeps scans linear. */
const MAX_TOKEN = 300;

/**
 * Words of a text, split at whitespace, quotes, brackets and commas, without trailing
 * punctuation or `:line:col` suffixes. Every pattern below is matched against one such word,
 * never against the whole text: that bounds the regex work per word.
 */
function words(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/[\s`'"()<>[\]{},;|=]+/)) {
    if (raw.length < 3 || raw.length > MAX_TOKEN) continue;
    const word = raw.replace(/[.:!?*]+$/, "").replace(/(?::\d+)+$/, "").replace(/[.:!?*]+$/, "");
    if (word.length >= 3) out.push(word);
  }
  return out;
}

export function extractUrls(text: string): string[] {
  return words(text).filter((word) => URL_RE.test(word));
}

export function extractCodeSpans(text: string): string[] {
  const spans: string[] = [];
  for (const match of text.matchAll(CODE_SPAN_RE)) {
    const span = match[1]?.trim();
    if (span) spans.push(span);
  }
  return spans;
}

/** File paths mentioned in prose, kept exactly as written. URLs are not paths. */
export function extractPaths(text: string): string[] {
  const found: string[] = [];
  for (const word of words(text)) {
    if (word.includes("://")) continue;
    if (word.includes("/")) {
      if (!SLASH_PATH_RE.test(word) || /^\d+\/\d+/.test(word)) continue;
      const slashes = word.split("/").length - 1;
      // "and/or" and "/compact" are not paths; "./src", "a/b/c" and "lib/x.ts" are.
      if (EXTENSION_RE.test(word) || slashes >= 2 || /^(?:~|\.{1,2})\//.test(word)) found.push(word.replace(/\/$/, "") || word);
    } else if (BARE_FILE_RE.test(word)) {
      found.push(word);
    }
  }
  return found;
}

// Product names written in camel case are words, not identifiers from the code.
const WELL_KNOWN_NAMES = new Set(
  [
    "TypeScript",
    "JavaScript",
    "GitHub",
    "GitLab",
    "PostgreSQL",
    "MySQL",
    "MongoDB",
    "GraphQL",
    "OpenAI",
    "PowerShell",
    "WebSocket",
    "WebAssembly",
    "YouTube",
    "LinkedIn",
    "macOS",
    "iOS",
    "iPhone",
    "iPad",
    "VSCode",
    "NodeJS",
    "DynamoDB",
    "CloudFlare",
    "Cloudflare",
    "PyTorch",
    "TensorFlow",
    "NumPy",
    "FastAPI",
    "DevOps",
    "ChatGPT",
    "SQLite",
    "OAuth",
    "JetBrains",
    "IntelliJ",
    "WordPress",
    "PayPal",
    "DeepSeek",
    "LangChain",
  ].map((n) => n.toLowerCase()),
);

export function extractIdentifiers(text: string): string[] {
  const found: string[] = [];
  for (const word of words(text)) {
    // `AuthService.login` → AuthService, login; `src/x.ts` is a path, not an identifier.
    if (word.includes("/")) continue;
    for (const part of word.split(".")) {
      if (IDENTIFIER_RE.test(part) && !WELL_KNOWN_NAMES.has(part.toLowerCase())) found.push(part);
    }
  }
  return found;
}

/** Insertion-ordered set of strings, compared case-insensitively after whitespace collapse. */
export class OrderedSet {
  private readonly items = new Map<string, string>();

  add(value: string): boolean {
    const key = normalizeKey(value);
    if (key.length === 0 || this.items.has(key)) return false;
    this.items.set(key, value);
    return true;
  }

  has(value: string): boolean {
    return this.items.has(normalizeKey(value));
  }

  values(): string[] {
    return [...this.items.values()];
  }

  get size(): number {
    return this.items.size;
  }
}

export function normalizeKey(value: string): string {
  return value.replace(/\s+/g, " ").trim().toLowerCase();
}

/** Wraps a path or command in backticks unless it already is. */
export function code(text: string): string {
  return text.includes("`") ? text : `\`${text}\``;
}
