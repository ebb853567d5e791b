/**
 * What Base Context's own hooks gave back to the model after another agent's compaction (Claude
 * Code's SessionStart hook: the constraints, standing errors and files its summary lost), as
 * probes. The import keeps that hook's additional context in the context, where the model read it
 * (an injected-text message, formats/claude-code/attachments.ts), in the lines repair writes
 * ("- User constraint: …", "- Error (…): `…`"): the items are carried as a previous summary's are,
 * so the next compaction is asked to keep them too, and its summary is checked against them.
 */
import type { SessionEntry } from "@base-context/protocol";
import { carriedProbes, contextProbes, isInjectedText, mergeProbes, type RetentionProbes } from "@base-context/core";

/** The probes of the context `path` builds (contextProbes), with the items hooks handed back after its compaction. */
export function probesWithHandedBack(path: readonly SessionEntry[]): RetentionProbes {
  return mergeProbes(contextProbes(path), handedBackProbes(path));
}

/** The items handed back by a hook after the latest compaction on `path` (the one the context starts with). */
export function handedBackProbes(path: readonly SessionEntry[]): RetentionProbes {
  let start = 0;
  for (let index = path.length - 1; index >= 0; index--) {
    if (path[index]!.type === "compaction") {
      start = index + 1;
      break;
    }
  }
  const texts: string[] = [];
  for (const entry of path.slice(start)) {
    if (entry.type !== "custom_message" || !isInjectedText(entry.customType) || typeof entry.details !== "object" || entry.details === null) continue;
    if ((entry.details as { attachment?: unknown }).attachment !== "hook_additional_context") continue;
    texts.push(typeof entry.content === "string" ? entry.content : entry.content.map((block) => (block.type === "text" ? block.text : "")).join("\n"));
  }
  // Its item lines are repair's: read as the critical-context section of a previous summary would be.
  const items = texts.flatMap((text) => text.split("\n").filter((line) => line.startsWith("- ")));
  return items.length === 0 ? mergeProbes() : carriedProbes(`## Critical Context\n${items.join("\n")}`);
}
