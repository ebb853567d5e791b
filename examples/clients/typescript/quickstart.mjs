#!/usr/bin/env node
/**
 * Base Context from Node with the typed client of `@base-context/protocol`:
 * start the daemon, record a short agent turn, build the context for an OpenAI-compatible API,
 * handle an error, then import a real session and compact it with progress and notifications.
 *
 *   pnpm build && BASE_CONTEXT_HOME=$(mktemp -d) node examples/clients/typescript/quickstart.mjs
 *
 * Plain JavaScript (ESM) so it runs as is; in TypeScript the same calls are fully typed: params
 * and results are inferred from each method's declaration (`SessionCreate`, `ContextBuild`, …).
 */
import { fileURLToPath } from "node:url";
// In your own project: import { … } from "@base-context/protocol";
import {
  CompactionDidEnd,
  CompactionDidStart,
  CompactionRun,
  ContextBuild,
  EntryAppend,
  EntryAppendMany,
  ErrorCodes,
  SessionCreate,
  SessionGet,
  SessionImport,
  spawnDaemon,
} from "../../../packages/protocol/dist/index.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const SAMPLE = `${REPO}examples/sessions/refactor-auth.jsonl`;

// In your own project: spawnDaemon() runs `base-context serve` from PATH.
const { client, exited } = spawnDaemon({
  command: process.execPath,
  args: [`${REPO}packages/daemon/dist/cli/main.js`, "serve"],
  stderr: "inherit", // the daemon's log; stdout carries protocol bytes only
});

const { serverInfo } = await client.initialize({ clientInfo: { name: "quickstart" }, projectDir: process.cwd() });
console.log(`connected to ${serverInfo.name} ${serverInfo.version}`);

// 1. A session and one agent turn: the user asks, the assistant calls a tool, the tool answers.
const { session } = await client.request(SessionCreate, { cwd: process.cwd(), name: "quickstart" });
await client.request(EntryAppend, {
  sessionId: session.id,
  entry: { type: "message", message: { role: "user", content: "What does src/index.ts export?", timestamp: Date.now() } },
});
const turn = await client.request(EntryAppendMany, {
  sessionId: session.id,
  entries: [
    {
      type: "message",
      message: {
        role: "assistant",
        content: [{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "src/index.ts" } }],
        stopReason: "toolUse",
        timestamp: Date.now(),
      },
    },
    {
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: "call_1",
        toolName: "read",
        content: [{ type: "text", text: "export { main } from './main.js';" }],
        isError: false,
      },
    },
  ],
});
console.log(`session ${session.id}: ${turn.entries.length + 1} entries, leaf ${turn.leafId}`);

// 2. The context, ready for any OpenAI-compatible chat-completions endpoint.
const context = await client.request(ContextBuild, { sessionId: session.id, format: "openai-chat" });
console.log(`context: ${context.messages.length} messages, ${context.tokens} tokens`);
for (const message of context.messages) console.log(`  ${message.role}: ${JSON.stringify(message.content ?? message.tool_calls)}`);

// 3. Errors are JSON-RPC errors with a stable data.code.
try {
  await client.request(SessionGet, { sessionId: "no-such-session" });
} catch (error) {
  console.log(`error ${error.code} (${error.data.code}): ${error.message}`);
  if (error.code !== ErrorCodes.SessionNotFound) throw error;
}

// 4. A real session from pi, compacted; progress and notifications arrive while it runs.
const imported = await client.request(SessionImport, { format: "pi-jsonl", path: SAMPLE });
console.log(`imported ${imported.entryCount} entries into ${imported.session.id}`);
client.onNotification(CompactionDidStart, (params) => console.log(`  compaction/didStart (${params.reason})`));
client.onNotification(CompactionDidEnd, (params) => console.log(`  compaction/didEnd: ${params.status}`));
const progress = client.onProgress("quickstart-1", (value) => console.log(`  $/progress ${JSON.stringify(value)}`));
const compacted = await client.request(CompactionRun, { sessionId: imported.session.id, workDoneToken: "quickstart-1" });
progress.dispose();
console.log(`compaction ${compacted.status} by ${compacted.summarizer}: ${compacted.message ?? ""}`);

await client.shutdown();
console.log(`daemon exited with code ${await exited}`);
client.dispose();
