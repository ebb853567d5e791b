// Generated conversations for the daemon benches: entries to append, and pi JSONL files to import.
// Texts come from a small pool (the tokenizer fixtures) with a per-entry suffix, so building
// 100,000 entries costs little time in the bench itself.
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { daemonModule } from "./dist.mjs";

const { generateCode, generateProse, generateToolResult } = await daemonModule("tokens/fixtures/corpus.js");

const POOL_SIZE = 64;
const pool = (make, chars) => Array.from({ length: POOL_SIZE }, (_, seed) => make(chars, seed + 1));
const pick = (texts, index) => `${texts[index % POOL_SIZE]} #${index}`;

/** Text pools sized so the four-entry turn below averages `bytesPerEntry` of JSON. */
function texts(bytesPerEntry) {
  const scale = bytesPerEntry / 700;
  const size = (chars) => Math.max(20, Math.round(chars * scale));
  return {
    question: pool(generateProse, size(180)),
    thinking: pool(generateProse, size(300)),
    answer: pool(generateProse, size(350)),
    toolOutput: pool(generateToolResult, size(1400)),
    code: pool(generateCode, size(120)),
  };
}

/**
 * A stream of turns: user question → assistant (thinking, text, read tool call) → tool result →
 * assistant answer. `entryBodies(n, i0)` gives entries i0 … i0+n-1 as `entry/append` bodies.
 */
export function conversation(bytesPerEntry) {
  const t = texts(bytesPerEntry);
  const message = (index) => {
    const turn = Math.floor(index / 4);
    const timestamp = 1_767_225_600_000 + index * 1000;
    switch (index % 4) {
      case 0:
        return { role: "user", content: pick(t.question, index), timestamp };
      case 1:
        return {
          role: "assistant",
          content: [
            { type: "thinking", thinking: pick(t.thinking, index) },
            { type: "text", text: pick(t.answer, index + 1) },
            { type: "toolCall", id: `call_${turn}`, name: "read", arguments: { path: `src/module${turn % 97}.ts`, offset: turn % 400 } },
          ],
          provider: "openai",
          model: "gpt-5",
          usage: { input: 1000 + index, output: 200, cacheRead: 0, cacheWrite: 0, totalTokens: 1200 + index },
          stopReason: "toolUse",
          timestamp,
        };
      case 2:
        return {
          role: "toolResult",
          toolCallId: `call_${turn}`,
          toolName: "read",
          content: [{ type: "text", text: pick(t.toolOutput, index) }],
          isError: false,
          timestamp,
        };
      default:
        return {
          role: "assistant",
          content: [{ type: "text", text: `${pick(t.answer, index)}\n\n${pick(t.code, index)}` }],
          provider: "openai",
          model: "gpt-5",
          usage: { input: 1500 + index, output: 300, cacheRead: 0, cacheWrite: 0, totalTokens: 1800 + index },
          stopReason: "stop",
          timestamp,
        };
    }
  };
  return {
    entryBodies: (count, firstIndex) =>
      Array.from({ length: count }, (_, offset) => ({ type: "message", message: message(firstIndex + offset) })),
    message,
  };
}

/** The id of the `index`th entry (0-based) of a file from `writePiSession`: 8 hex digits, as pi's. */
export const piEntryId = (index) => (index + 1).toString(16).padStart(8, "0");

/**
 * Writes a pi v3 session file of `entryCount` entries (a single chain, as pi writes a linear
 * conversation) from `conversation(bytesPerEntry)`, under the session id `sessionId`.
 * Returns the file's size in bytes.
 */
export async function writePiSession(path, entryCount, { bytesPerEntry = 700, sessionId = "bench-import-0001" } = {}) {
  const { message } = conversation(bytesPerEntry);
  const out = createWriteStream(path);
  const header = { type: "session", version: 3, id: sessionId, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/bench/project" };
  let bytes = 0;
  let lines = [JSON.stringify(header)];
  const flush = async () => {
    const text = lines.join("\n") + "\n";
    bytes += Buffer.byteLength(text);
    lines = [];
    if (!out.write(text)) await once(out, "drain");
  };
  for (let index = 0; index < entryCount; index++) {
    const entry = {
      type: "message",
      id: piEntryId(index),
      parentId: index === 0 ? null : piEntryId(index - 1),
      timestamp: new Date(1_767_225_600_000 + index * 1000).toISOString(),
      message: message(index),
    };
    lines.push(JSON.stringify(entry));
    if (lines.length >= 2000) await flush();
  }
  await flush();
  out.end();
  await once(out, "close");
  return bytes;
}
