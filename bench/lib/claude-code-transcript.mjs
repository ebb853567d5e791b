// A generated Claude Code transcript of a given size, for the hook's bench and its tests: turns of
// a user request, an Edit of a file, its result, a failing `npm test` and its error, then a reply.
// The first request states a constraint. Optionally ends with a compaction of Claude Code's (its
// boundary and summary lines) whose summary keeps the constraint and drops the errors.
import { appendFileSync, writeFileSync } from "node:fs";

const uuid = (n) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;

/**
 * Writes the transcript to `path` until it holds at least `bytes` bytes; returns the session id,
 * the number of turns and the next free uuid number (to append more turns with `appendTurns`).
 * `compactEvery`: a compaction of Claude Code's after each so many bytes of turns, as Claude Code
 * compacts when the context nears its window (a real transcript of 50 MB holds many).
 */
export function writeClaudeTranscript(
  path,
  { bytes, sessionId = "5e551011-0000-4000-8000-000000000001", cwd = "/srv/app", compactAtEnd = false, compactEvery = Infinity },
) {
  writeFileSync(path, "");
  const state = { path, sessionId, cwd, next: 1, parent: null, written: 0, turns: 0 };
  let compactedAt = 0;
  while (state.written < bytes) {
    appendTurns(state, 1);
    if (state.written - compactedAt >= compactEvery && state.written < bytes) {
      appendCompaction(state);
      compactedAt = state.written;
    }
  }
  if (compactAtEnd) appendCompaction(state);
  return state;
}

/** Appends `count` turns to the transcript `state` describes. */
export function appendTurns(state, count) {
  const lines = [];
  for (let i = 0; i < count; i++) {
    const turn = state.turns++;
    const file = `${state.cwd}/src/module-${turn % 50}.ts`;
    const request = turn === 0 ? "Fix the parser in src/module-0.ts. Never edit the generated files." : `Now fix case ${turn} in ${file}.`;
    lines.push(line(state, "user", { role: "user", content: request }));
    lines.push(
      line(
        state,
        "assistant",
        assistant([
          {
            type: "tool_use",
            id: `toolu_e${turn}`,
            name: "Edit",
            input: { file_path: file, old_string: `case ${turn}`, new_string: `case ${turn} fixed` },
          },
        ]),
      ),
    );
    lines.push(
      line(state, "user", {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `toolu_e${turn}`, content: `The file ${file} has been updated.\n${body(turn)}` }],
      }),
    );
    lines.push(
      line(
        state,
        "assistant",
        assistant([
          {
            type: "tool_use",
            id: `toolu_b${turn}`,
            name: "Bash",
            input: { command: `npm test -- case${turn}`, description: "Run the test" },
          },
        ]),
      ),
    );
    lines.push(
      line(state, "user", {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: `toolu_b${turn}`,
            is_error: true,
            content: `Error: case ${turn} expected 2, received 1\n    at Object.<anonymous> (test/case${turn}.test.ts:12:5)`,
          },
        ],
      }),
    );
    lines.push(line(state, "assistant", assistant([{ type: "text", text: `Case ${turn} still fails; I will look at it next.` }])));
  }
  const text = lines.join("\n") + "\n";
  appendFileSync(state.path, text);
  state.written += Buffer.byteLength(text);
}

/** Claude Code's compaction: its boundary line, then its summary line (keeps the constraint, drops the errors). */
export function appendCompaction(state) {
  const last = state.parent;
  const boundaryId = uuid(state.next++);
  const boundary = {
    parentUuid: null, logicalParentUuid: last, isSidechain: false, userType: "external", cwd: state.cwd, sessionId: state.sessionId, version: "2.1.332",
    type: "system", subtype: "compact_boundary", content: "Conversation compacted", isMeta: false, timestamp: stamp(state.next), uuid: boundaryId,
    level: "info", compactMetadata: { trigger: "manual", preTokens: 150000 },
  };
  state.parent = boundaryId;
  const summary = line(state, "user", {
    role: "user",
    content: "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n1. Primary Request: fix the parser cases. Never edit the generated files.\n2. Current Work: fixing the cases one by one.",
  }, { isCompactSummary: true });
  const text = `${JSON.stringify(boundary)}\n${summary}\n`;
  appendFileSync(state.path, text);
  state.written += Buffer.byteLength(text);
}

function line(state, type, message, extra = {}) {
  const id = uuid(state.next++);
  const value = {
    parentUuid: state.parent,
    isSidechain: false,
    userType: "external",
    cwd: state.cwd,
    sessionId: state.sessionId,
    version: "2.1.332",
    type,
    message,
    uuid: id,
    timestamp: stamp(state.next),
    ...extra,
  };
  state.parent = id;
  return JSON.stringify(value);
}

function assistant(content) {
  return {
    model: "claude-sonnet-4-5",
    id: `msg_${content[0].id ?? "text"}`,
    type: "message",
    role: "assistant",
    content,
    stop_reason: content[0].type === "tool_use" ? "tool_use" : "end_turn",
    usage: { input_tokens: 1000, output_tokens: 50 },
  };
}

/** About 3 KB of source, different in every turn. */
function body(turn) {
  const rows = [];
  for (let i = 0; i < 60; i++) rows.push(`  const value${i} = compute(${turn}, ${i}); // step ${i} of case ${turn}`);
  return rows.join("\n");
}

function stamp(n) {
  return new Date(Date.UTC(2026, 10, 1) + n * 1000).toISOString();
}
