/**
 * Codex rollout items (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) read as message bodies:
 * message content, tool call arguments, tool outputs and their errors, and which messages Codex
 * injected rather than the user typed (docs/import-formats.md#codex-codex-jsonl). Pure: no I/O, no state.
 */
import type { AgentMessage, AssistantContentBlock, UserContentBlock } from "@base-context/protocol";
import { isJsonObject, type JsonObject } from "../json-line.js";

/**
 * Tags Codex wraps its own user-role messages in (environment, AGENTS.md, skills, a shell command
 * the user ran with `!`, an interrupted turn). Newer Codex also marks them by provenance.
 */
const INJECTED_TAGS = [
  "environment_context",
  "user_instructions",
  "user_shell_command",
  "turn_aborted",
  "skill",
  "subagent_notification",
  "permissions instructions",
  "collaboration_mode",
];

/** Text and images of a message's content items (`input_text`, `output_text`, `input_image`, `refusal`). */
export function contentBlocks(content: unknown): UserContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: UserContentBlock[] = [];
  for (const part of content) {
    if (!isJsonObject(part)) continue;
    if (typeof part.text === "string") blocks.push({ type: "text", text: part.text });
    else if (typeof part.refusal === "string") blocks.push({ type: "text", text: part.refusal });
    else if (part.type === "input_image" && typeof part.image_url === "string") blocks.push(imageBlock(part.image_url));
  }
  return blocks;
}

/** A data URL as an image; a link (the image is not in the file) as a text mention of it. */
function imageBlock(url: string): UserContentBlock {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (match) return { type: "image", mimeType: match[1]!, data: match[2]! };
  return { type: "text", text: `[image: ${url}]` };
}

export function blocksText(blocks: readonly UserContentBlock[]): string {
  return blocks.map((block) => (block.type === "text" ? block.text : "")).join("\n");
}

/**
 * Why a user-role message was written by Codex, not typed by the user: what it is
 * (`environment_context`, `user_instructions`, a provenance such as `harness`…), or undefined for
 * the user's own words.
 */
export function injectedKind(payload: JsonObject, text: string): string | undefined {
  const provenance = provenanceKinds(payload);
  const trimmed = text.trimStart();
  for (const tag of INJECTED_TAGS) if (trimmed.startsWith(`<${tag}`)) return tag.replace(/\s+/g, "_");
  if (trimmed.startsWith("# AGENTS.md instructions for ")) return "user_instructions";
  if (provenance.length > 0 && provenance.every((kind) => kind !== "user")) return provenance[0];
  return undefined;
}

/** `provenance.type` of each content item, where Codex records it (newer versions). */
function provenanceKinds(payload: JsonObject): string[] {
  const passthrough = payload.internal_chat_message_metadata_passthrough;
  if (!isJsonObject(passthrough) || !Array.isArray(passthrough.content_item_metadata)) return [];
  const kinds: string[] = [];
  for (const item of passthrough.content_item_metadata) {
    if (isJsonObject(item) && isJsonObject(item.provenance) && typeof item.provenance.type === "string") kinds.push(item.provenance.type);
  }
  return kinds;
}

/** A function call's `arguments` (a JSON string) as the object a tool call block holds. */
export function callArguments(raw: unknown): Record<string, unknown> {
  if (isJsonObject(raw)) return raw;
  if (typeof raw !== "string") return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (isJsonObject(parsed)) return parsed;
  } catch {
    // Not JSON: the model wrote something else; kept as it is.
  }
  return { arguments: raw };
}

/** A `local_shell_call`'s action as tool call arguments: the command and where it ran. */
export function localShellArguments(action: unknown): Record<string, unknown> {
  if (!isJsonObject(action)) return {};
  const args: Record<string, unknown> = { command: action.command };
  if (typeof action.working_directory === "string") args.workdir = action.working_directory;
  if (typeof action.timeout_ms === "number") args.timeout_ms = action.timeout_ms;
  return args;
}

export interface ToolOutput {
  content: UserContentBlock[];
  isError: boolean;
  /** The command's exit code, when the output states one. */
  exitCode?: number;
}

/**
 * A `function_call_output` / `custom_tool_call_output` payload's output: a string (plain text,
 * or older Codex's JSON `{"output", "metadata": {"exit_code"}}`), `{content, success}`, or a
 * list of content items. An error is a non-zero exit code or `success: false`.
 */
export function toolOutput(output: unknown): ToolOutput {
  if (Array.isArray(output)) return { content: contentBlocks(output), isError: false };
  if (isJsonObject(output)) {
    const inner = toolOutput(output.content ?? output.body ?? "");
    return output.success === false ? { ...inner, isError: true } : inner;
  }
  const text = typeof output === "string" ? output : JSON.stringify(output ?? "");
  const structured = structuredShellOutput(text);
  if (structured) return structured;
  const exitCode = statedExitCode(text);
  const isError = (exitCode !== undefined && exitCode !== 0) || /^(execution error|apply_patch verification failed)/i.test(text);
  return { content: [{ type: "text", text }], isError, ...(exitCode !== undefined ? { exitCode } : {}) };
}

/** Older Codex wrote shell results as `{"output": "...", "metadata": {"exit_code": 1, ...}}`. */
function structuredShellOutput(text: string): ToolOutput | undefined {
  if (!text.startsWith("{") || !text.includes('"metadata"')) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isJsonObject(parsed) || typeof parsed.output !== "string" || !isJsonObject(parsed.metadata)) return undefined;
    const exitCode = parsed.metadata.exit_code;
    if (typeof exitCode !== "number") return undefined;
    return { content: [{ type: "text", text: parsed.output }], isError: exitCode !== 0, exitCode };
  } catch {
    return undefined;
  }
}

/** The first exit code a text output states (`Process exited with code N`, `Exit code: N`). */
function statedExitCode(text: string): number | undefined {
  const match = /^(?:Process exited with code|Exit code:) (-?\d+)\s*$/m.exec(text.slice(0, 2000));
  return match ? Number(match[1]) : undefined;
}

/** Reasoning summary and content texts as thinking; the encrypted part kept as the signature. */
export function reasoningBlocks(payload: JsonObject): AssistantContentBlock[] {
  const texts: string[] = [];
  for (const list of [payload.summary, payload.content]) {
    if (!Array.isArray(list)) continue;
    for (const part of list) if (isJsonObject(part) && typeof part.text === "string" && part.text.length > 0) texts.push(part.text);
  }
  const encrypted = typeof payload.encrypted_content === "string" ? payload.encrypted_content : undefined;
  if (texts.length === 0 && encrypted === undefined) return [];
  return [{ type: "thinking", thinking: texts.join("\n\n"), ...(encrypted !== undefined ? { thinkingSignature: encrypted } : {}) }];
}

/** The first text of a message payload, for matching copies of a message (a compaction's kept ones). */
export function messageText(payload: JsonObject): string {
  return blocksText(contentBlocks(payload.content));
}

export type { AgentMessage };
