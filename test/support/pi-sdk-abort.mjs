/**
 * Cancelling a compaction the way pi's interactive mode does (Esc → `abortCompaction()`), which
 * RPC mode cannot do: pi's SDK, the same AgentSession the CLI runs, with the Base Context
 * extension loaded by pi's resource loader. Run as a child process (pi reads its agent folder
 * from PI_CODING_AGENT_DIR) by test/pi-extension.e2e.test.ts:
 *
 *   node pi-sdk-abort.mjs <pi's dist/index.js> <extension> <prompt>…
 *
 * Prompts, starts `compact()`, prints `{"compacting":true}`, aborts when a line arrives on stdin,
 * and prints how compact() ended: `{"ended":"rejected","error":…}` or `{"ended":"resolved"}`.
 */
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [sdkPath, extension, ...prompts] = process.argv.slice(2);
const pi = await import(pathToFileURL(sdkPath).href);
const cwd = process.cwd();
const agentDir = pi.getAgentDir();

const resourceLoader = new pi.DefaultResourceLoader({ cwd, agentDir, additionalExtensionPaths: [extension] });
await resourceLoader.reload();
const { session } = await pi.createAgentSession({ cwd, agentDir, resourceLoader, sessionManager: pi.SessionManager.create(cwd) });
await session.bindExtensions({ onError: (error) => print({ extensionError: String(error?.error ?? error) }) });
for (const prompt of prompts) await session.prompt(prompt);

const lines = createInterface({ input: process.stdin });
const compacting = session.compact().then(
  () => ({ ended: "resolved" }),
  (error) => ({ ended: "rejected", error: error instanceof Error ? error.message : String(error) }),
);
print({ compacting: true });
await new Promise((resolve) => lines.once("line", resolve));
session.abortCompaction();
print(await compacting);
lines.close();
await session.dispose?.();
process.exit(0);

function print(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
