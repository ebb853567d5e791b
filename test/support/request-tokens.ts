/**
 * The size of a chat-completions request as the provider counts it against the model's window:
 * every message's text and tool calls, the tool schemas the SDK adds to each request, and OpenAI's
 * published framing (a few tokens a message), with o200k_base (the daemon's default encoding, read
 * from its own copy of gpt-tokenizer). Counted from what went on the wire, never from what the
 * client believed it sent.
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { FakeChatRequestBody } from "./fake-openai.js";

const requireFromDaemon = createRequire(fileURLToPath(new URL("../../packages/daemon/package.json", import.meta.url)));
const o200k = requireFromDaemon("gpt-tokenizer/encoding/o200k_base") as { countTokens(text: string): number };

/** Tokens each message's framing costs (role and separators), and the reply's priming. */
const PER_MESSAGE = 4;
const PRIMING = 3;

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content);
  return content.map((part: { text?: unknown }) => (typeof part?.text === "string" ? part.text : JSON.stringify(part))).join("");
}

/** The request's input tokens: messages, their tool calls, and the tools' names, descriptions and schemas. */
export function requestTokens(body: FakeChatRequestBody | undefined): number {
  let tokens = PRIMING;
  for (const message of body?.messages ?? []) {
    tokens += PER_MESSAGE + o200k.countTokens(message.role) + o200k.countTokens(contentText(message.content));
    for (const call of message.tool_calls ?? []) tokens += o200k.countTokens(call.function.name + call.function.arguments);
  }
  if (body?.tools?.length) tokens += o200k.countTokens(JSON.stringify(body.tools));
  return tokens;
}
