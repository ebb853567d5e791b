// Generated conversations for the daemon benches: entries to append, and pi JSONL files to import.
// Texts come from a small pool (the tokenizer fixtures) with a per-entry suffix, so building
// 100,000 entries costs little time in the bench itself.
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { fixtureModule } from "./dist.mjs";

const { generateCode, generateProse, generateToolResult } = await fixtureModule("tokens/fixtures/corpus.js");

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

/**
 * A long coding-agent run as counted path entries (`{ entry, tokens }`, what the pure core reads),
 * for the prune benches: each user prompt starts 1–6 tool rounds (assistant call → tool result),
 * then a final answer. Tool outputs follow a coding agent's spread — mostly small greps and reads,
 * some file dumps and test logs, a few huge listings — drawn from a seeded generator, so every run
 * is the same. Texts are short: the token counts are what the algorithms decide with.
 * Returns `{ rounds }`: an iterable of rounds, each the entries up to an assistant reply (a turn end).
 */
export function agentRun(turns, { seed = 7, startMs = 1_767_225_600_000 } = {}) {
  let state = seed >>> 0;
  const random = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const between = (min, max) => Math.round(min + random() * (max - min));
  const toolOutputTokens = () => {
    const roll = random();
    if (roll < 0.5) return between(100, 900); // grep hits, short reads, ls
    if (roll < 0.85) return between(1_000, 6_000); // a source file, a test log
    return between(8_000, 30_000); // find ., a generated file, a full build log
  };
  const TOOLS = [
    ["read", (i) => ({ path: `src/module${i % 97}.ts` })],
    ["bash", (i) => ({ command: i % 5 === 0 ? "find . -type f" : `npm test -- module${i % 97}` })],
    ["grep", (i) => ({ pattern: `symbol${i % 211}` })],
  ];
  let id = 0;
  let parentId = null;
  const entry = (body, tokens) => {
    const current = {
      ...body,
      id: `g${(++id).toString(16).padStart(7, "0")}`,
      parentId,
      timestamp: new Date(startMs + id * 1000).toISOString(),
    };
    parentId = current.id;
    return { entry: current, tokens };
  };
  const message = (msg, tokens) => entry({ type: "message", message: { ...msg, timestamp: startMs + id * 1000 } }, tokens);
  function* rounds() {
    for (let turn = 0; turn < turns; turn++) {
      const prompt = message({ role: "user", content: `task ${turn}` }, between(30, 300));
      const toolRounds = between(1, 6);
      let pending = [prompt];
      for (let r = 0; r < toolRounds; r++) {
        const [name, args] = TOOLS[(turn + r) % TOOLS.length];
        const callId = `call_${turn}_${r}`;
        pending.push(
          message(
            { role: "assistant", content: [{ type: "toolCall", id: callId, name, arguments: args(turn * 7 + r) }], stopReason: "toolUse" },
            between(60, 400),
          ),
        );
        yield pending;
        pending = [
          message(
            { role: "toolResult", toolCallId: callId, toolName: name, content: [{ type: "text", text: "…" }], isError: false },
            toolOutputTokens(),
          ),
        ];
      }
      pending.push(
        message({ role: "assistant", content: [{ type: "text", text: `done with task ${turn}` }], stopReason: "stop" }, between(100, 800)),
      );
      yield pending;
    }
  }
  return { rounds };
}
