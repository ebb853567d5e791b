/**
 * The ledger this plugin keeps in each compaction's `details`: every decision and every file
 * the agent touched, merged across compactions. Pure functions, so they are easy to test.
 */
import type { ContextMessage, SessionEntry } from "@base-context/plugin-sdk";

export const LEDGER_KIND = "decisions-and-artifacts";

export type ArtifactOperation = "read" | "written" | "edited";

export interface Artifact {
  path: string;
  operations: ArtifactOperation[];
  /** Id of the entry that touched it first / last (as far as this ledger has seen). */
  firstEntryId: string;
  lastEntryId: string;
}

export interface Decision {
  text: string;
  entryId: string;
}

export interface Ledger {
  kind: typeof LEDGER_KIND;
  version: 1;
  /** How many compactions fed this ledger. */
  compactions: number;
  decisions: Decision[];
  artifacts: Record<string, Artifact>;
}

export function emptyLedger(): Ledger {
  return { kind: LEDGER_KIND, version: 1, compactions: 0, decisions: [], artifacts: {} };
}

function isLedger(value: unknown): value is Ledger {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === LEDGER_KIND;
}

/** The ledger of the latest compaction on the branch that this plugin made, if any. */
export function previousLedger(branchEntries: readonly SessionEntry[]): Ledger | undefined {
  for (let i = branchEntries.length - 1; i >= 0; i--) {
    const entry = branchEntries[i]!;
    if (entry.type === "compaction" && isLedger(entry.details)) return structuredClone(entry.details);
  }
  return undefined;
}

const TOOL_OPERATIONS: Record<string, ArtifactOperation> = { read: "read", write: "written", edit: "edited" };

/** Sentences that announce a decision, in the user's or the assistant's words. */
const DECISION =
  /\b(?:decided|decision|we(?:'ll| will) use|let's use|let's go with|going with|chose|instead of|from now on|always|never)\b/i;

function textOf(message: ContextMessage): string {
  if (message.role === "user" || message.role === "custom") {
    return typeof message.content === "string"
      ? message.content
      : message.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
  }
  if (message.role === "assistant") return message.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
  return "";
}

/** Folds messages (with the ids of their entries) into the ledger. Idempotent: re-reading a message changes nothing. */
export function record(ledger: Ledger, messages: readonly ContextMessage[], entryIds: readonly string[]): Ledger {
  messages.forEach((message, index) => {
    const entryId = entryIds[index] ?? "?";
    if (message.role === "assistant") {
      for (const block of message.content) {
        if (block.type !== "toolCall") continue;
        const operation = TOOL_OPERATIONS[block.name];
        const path = block.arguments["path"];
        if (operation === undefined || typeof path !== "string") continue;
        const artifact = (ledger.artifacts[path] ??= { path, operations: [], firstEntryId: entryId, lastEntryId: entryId });
        if (!artifact.operations.includes(operation)) artifact.operations.push(operation);
        artifact.lastEntryId = entryId;
      }
    }
    for (const sentence of textOf(message).split(/(?<=[.!?])\s+|\n+/)) {
      const text = sentence.trim().slice(0, 240);
      if (text.length > 0 && DECISION.test(text) && !ledger.decisions.some((decision) => decision.text === text)) {
        ledger.decisions.push({ text, entryId });
      }
    }
  });
  return ledger;
}

/** The ledger as Markdown sections, appended to the summary the model sees. */
export function formatLedger(ledger: Ledger): string {
  const decisions = ledger.decisions.length > 0 ? ledger.decisions.map((decision) => `- ${decision.text}`).join("\n") : "- (none recorded)";
  const artifacts = Object.values(ledger.artifacts)
    .sort((a, b) => a.path.localeCompare(b.path))
    .map((artifact) => `- \`${artifact.path}\` — ${artifact.operations.join(", ")}`)
    .join("\n");
  return `## Decisions\n${decisions}\n\n## Artifacts\n${artifacts || "- (none)"}`;
}
