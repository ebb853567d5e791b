/**
 * The real OpenAI Agents SDK against the fake OpenAI server, for the Agents SDK tests: the scenario
 * the SDK runs (packages/openai-agents/test/scenario.mjs, under Node 24 from the npm registry: its
 * openai 7 needs Node ≥ 22), the fake agent's replies, and what to check in its requests.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { storeEnvFor } from "./engine.js";
import { defaultSummary, reply, type FakeChatRequestBody, type FakeReply, type RecordedRequest } from "./fake-openai.js";
import { requestTokens } from "./request-tokens.js";

export const SCENARIO = fileURLToPath(new URL("../../packages/openai-agents/test/scenario.mjs", import.meta.url));
export const SUMMARY_MARK = "The conversation history before this point was compacted into the following summary:";

export type ScenarioEvent = Record<string, unknown> & { event: string; at: number };

/** The agent's requests carry its tools; the summaries the daemon asks for carry none. */
export const isAgentRequest = (request: RecordedRequest) => (request.body?.tools?.length ?? 0) > 0;

/**
 * How the fake reports a request's usage: `counted`, the whole request as a provider counts it
 * (tools included); `rough`, the fake's own estimate (a quarter of the messages' characters, no tool
 * schemas); `none`, no usage at all, as some OpenAI-compatible servers answer.
 */
export type UsageReport = "counted" | "rough" | "none";

/** The fake agent: two parallel tool calls for each user message, then a short answer. */
export function agentReply(body: FakeChatRequestBody | undefined, usageReport: UsageReport = "counted"): FakeReply {
  const messages = body?.messages ?? [];
  const last = messages.at(-1);
  if (!body?.tools?.length) return reply.text(defaultSummary(body));
  const usage =
    usageReport === "counted"
      ? { prompt_tokens: requestTokens(body), completion_tokens: 12, total_tokens: requestTokens(body) + 12 }
      : usageReport === "none"
        ? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }
        : undefined;
  if (last?.role === "tool") return reply.text(`Fixed it (${messages.length} messages read).`, usage ? { usage } : {});
  const file = /src\/[\w.]+/.exec(String(last?.content))?.[0] ?? "src/unknown.ts";
  return reply.toolCalls(
    [
      { name: "read_file", arguments: { path: file } },
      { name: "run_tests", arguments: { filter: file.replace(/\.ts$/, ".test.ts") } },
    ],
    usage ? { usage } : {},
  );
}

/** The scenario's environment: a home of its own, the fake as the OpenAI endpoint, no key. */
export function scenarioEnv(home: string, baseURL: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...storeEnvFor(home), BASE_CONTEXT_HOME: home, OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: "", ...extra };
}

export interface ScenarioRun {
  events: ScenarioEvent[];
  code: number | null;
  stderr: string;
}

/** Runs the scenario with `node`; `onStart` gets its process (to find the daemon it spawns). */
export function runScenario(
  args: string[],
  env: NodeJS.ProcessEnv,
  node: string,
  onStart?: (child: ChildProcess) => void,
): Promise<ScenarioRun> {
  const child = spawn(node, [SCENARIO, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  onStart?.(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve) =>
    child.once("close", (code) => {
      const events = stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as ScenarioEvent);
      resolve({ events, code, stderr });
    }),
  );
}

/** Every tool call of the chat messages answered by a tool message, and every tool message by a call. */
export function unpaired(messages: NonNullable<FakeChatRequestBody["messages"]>): string[] {
  const calls = messages.flatMap((message) => (message.tool_calls ?? []).map((call) => call.id));
  const outputs = messages.filter((message) => message.role === "tool").map((message) => message.tool_call_id ?? "");
  return [...calls.filter((id) => !outputs.includes(id)), ...outputs.filter((id) => !calls.includes(id))];
}
