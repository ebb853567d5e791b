/**
 * Claude Code's `attachment` lines: what its harness adds to a turn (the SessionStart hook's
 * additional context, the files it reads again after a compaction, the date, the model's name, the
 * skills and tools it lists…). Most reach the model, each as a system reminder in a user message:
 * those become `injected-text` messages of the context, in words of their own (the text the line
 * holds, and what each field says). A few are bookkeeping that no request carries (the system
 * prompt's snapshot, a hook's own run report, an empty session context): kept as data.
 * docs/import-formats.md lists each kind.
 */
import { isJsonObject, type JsonObject } from "../json-line.js";

/** Kinds known to reach no request: kept as `claude-code.attachment` data. */
const DATA_ONLY = new Set([
  // The system prompt and tools of a request, recorded beside it.
  "prompt_snapshot",
  // A hook's run (its command, exit status, raw output); what it gives the model is a hook_additional_context line.
  "hook_success",
  "hook_non_blocking_error",
  "hook_cancelled",
  "hook_system_message",
]);

/** The text of an attachment as the context holds it, or undefined when it is data only. */
export function attachmentText(attachment: JsonObject): string | undefined {
  const type = typeof attachment.type === "string" ? attachment.type : "";
  if (DATA_ONLY.has(type)) return undefined;
  const text = knownText(type, attachment) ?? ownText(attachment);
  return text !== undefined && text.trim().length > 0 ? text : undefined;
}

/** The kinds whose fields say more than one text field would. */
function knownText(type: string, attachment: JsonObject): string | undefined {
  switch (type) {
    case "hook_additional_context": {
      const event = typeof attachment.hookEvent === "string" ? attachment.hookEvent : "A";
      const content = stringsOf(attachment.content);
      return content === undefined ? undefined : `${event} hook additional context:\n${content}`;
    }
    case "file":
      return fileText(attachment);
    case "date":
      return typeof attachment.date === "string" ? `Date: ${attachment.date}` : undefined;
    case "environment":
      return isJsonObject(attachment.snapshot) ? `Environment:\n${fieldLines(attachment.snapshot)}` : undefined;
    case "deferred_tools_delta":
    case "agent_listing_delta":
      return listingDelta(type === "deferred_tools_delta" ? "Tools that can be loaded" : "Agent types", attachment);
    case "remote_session_change":
      return `Commit and pull request attribution:\n${fieldLines(attachment, ["commit", "pr", "url"])}`;
    case "session_context":
      return isJsonObject(attachment.context) && Object.keys(attachment.context).length > 0
        ? `Session context:\n${fieldLines(attachment.context)}`
        : undefined;
    default:
      return undefined;
  }
}

/** Any other kind: the text it carries (`text`, or `content` as a string or strings); none: data only. */
function ownText(attachment: JsonObject): string | undefined {
  if (typeof attachment.text === "string") return attachment.text;
  return stringsOf(attachment.content);
}

/** A file Claude Code gave the model (read again after a compaction, or named with @). */
function fileText(attachment: JsonObject): string | undefined {
  const path = typeof attachment.displayPath === "string" ? attachment.displayPath : typeof attachment.filename === "string" ? attachment.filename : "";
  const content = isJsonObject(attachment.content) ? attachment.content : undefined;
  const file = content && isJsonObject(content.file) ? content.file : undefined;
  if (file && typeof file.content === "string") return `File ${path}:\n${file.content}`;
  if (content?.type === "image") return `File ${path}: [image]`;
  return path.length > 0 ? `File ${path}` : undefined;
}

function listingDelta(what: string, attachment: JsonObject): string | undefined {
  const added = stringsOf(attachment.addedLines);
  const removed = Array.isArray(attachment.removedNames) ? attachment.removedNames.filter((name) => typeof name === "string") : [];
  if (added === undefined && removed.length === 0) return undefined;
  return [added !== undefined ? `${what}:\n${added}` : undefined, removed.length > 0 ? `No longer available: ${removed.join(", ")}` : undefined]
    .filter((part) => part !== undefined)
    .join("\n");
}

/** "key: value" lines of an object's plain fields (strings, numbers, booleans; lists of them joined). */
function fieldLines(object: JsonObject, keys: readonly string[] = Object.keys(object)): string {
  const lines: string[] = [];
  for (const key of keys) {
    const value = object[key];
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") lines.push(`- ${key}: ${String(value)}`);
    else if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === "string")) lines.push(`- ${key}: ${value.join(", ")}`);
  }
  return lines.join("\n");
}

/** A string, or strings joined by line breaks; undefined for anything else. */
function stringsOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return undefined;
  const strings = value.filter((item): item is string => typeof item === "string");
  return strings.length > 0 ? strings.join("\n") : undefined;
}
