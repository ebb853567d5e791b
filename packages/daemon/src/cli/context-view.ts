/**
 * The messages of a built context as `base-context show` prints them: native messages as
 * context/message-view.ts shows them (with their stored counts), OpenAI chat messages counted on
 * their own text (content, tool call names and arguments).
 */
import type { OpenAIChatMessage } from "@base-context/protocol";
import type { MessageView } from "../context/message-view.js";
import type { TokenCounter } from "../tokens/counter.js";
import { IMAGE_TOKENS } from "../tokens/index.js";

export async function viewOpenAIMessage(message: OpenAIChatMessage, counter: TokenCounter): Promise<MessageView> {
  const { text, counted, images } = openAIText(message);
  const tokens = (await counter.countTextAsync(counted)) + images * IMAGE_TOKENS;
  const label = message.role === "tool" && message.tool_call_id ? `tool ${message.tool_call_id}` : message.role;
  return { label, text, tokens };
}

/** The printed text, the counted text (what the model is sent), and the images in it. */
function openAIText(message: OpenAIChatMessage): { text: string; counted: string; images: number } {
  const shown: string[] = [];
  let counted = "";
  let images = 0;
  if (typeof message.content === "string") {
    shown.push(message.content);
    counted += message.content;
  } else if (Array.isArray(message.content)) {
    for (const part of message.content) {
      if (part.type === "text" && typeof part.text === "string") {
        shown.push(part.text);
        counted += part.text;
      } else {
        images++;
        shown.push("[image]");
      }
    }
  }
  for (const call of message.tool_calls ?? []) {
    shown.push(`→ ${call.function.name}(${call.function.arguments})  [${call.id}]`);
    counted += call.function.name + call.function.arguments;
  }
  return { text: shown.join("\n"), counted, images };
}
