/**
 * `@base-context/openai-agents` where agent builders are, as its READMEs say, against the fake
 * OpenAI server: the example (examples/openai-agents/README.md) run under Node 22 and Node 24 on this
 * clone, installed with the tests' own Node (the daemon runs under the Node its SQLite addon was
 * built for, or says exactly what to run); and the tarballs of `pnpm tarballs` installed with npm
 * into an empty app, run under Node 24 with `base-context` on the PATH as `npm link` puts it there.
 */
import { execFile, spawn } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAEMON_BIN } from "./support/daemon.js";
import { storeEnvFor } from "./support/engine.js";
import { defaultSummary, reply, startFakeOpenAI, type FakeChatRequestBody, type FakeOpenAI, type FakeReply } from "./support/fake-openai.js";
import { ensureNode, NODE_ABIS, type NodeMajor } from "./support/other-node.js";
import { requestTokens } from "./support/request-tokens.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const EXAMPLE = join(ROOT, "examples", "openai-agents");

/** The example's reviewer: lists the folder first, then reads a file and notes a finding each turn; counts usage as a provider does. */
function reviewerReply(body: FakeChatRequestBody | undefined): FakeReply {
  if (!body?.tools?.length) return reply.text(defaultSummary(body));
  const usage = { prompt_tokens: requestTokens(body), completion_tokens: 10 };
  const messages = body.messages ?? [];
  if (messages.at(-1)?.role === "tool") return reply.text(`Reviewed part ${messages.filter((m) => m.role === "user").length}.`, { usage });
  const tools = body.tools.map((tool) => tool.function?.name);
  if (tools.includes("list_files") && !JSON.stringify(messages).includes("list_files")) {
    return reply.toolCalls([{ name: "list_files", arguments: { folder: "." } }], { usage });
  }
  const read = tools.includes("read_file") ? "read_file" : tools[0]!;
  return reply.toolCalls(
    [
      { name: read, arguments: { path: "main.mjs" } },
      ...(tools.includes("note") ? [{ name: "note", arguments: { finding: "main.mjs closes the session in finally" } }] : []),
    ],
    { usage },
  );
}

/** What a user's shell has: no test pass settings (NODE_OPTIONS preloads, BASE_CONTEXT_* of the suite). */
function userEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("BASE_CONTEXT_") && key !== "NODE_OPTIONS") env[key] = value;
  return { ...env, ...extra };
}

/** The example's environment, as its README runs it (from examples/openai-agents), with a home of its own. */
function exampleEnv(home: string, fake: FakeOpenAI, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return userEnv({
    ...storeEnvFor(home),
    BASE_CONTEXT_HOME: home,
    OPENAI_API_KEY: "test",
    OPENAI_BASE_URL: fake.baseURL,
    BASE_CONTEXT_DAEMON: "../../packages/daemon/bin/base-context.js",
    ...extra,
  });
}

function runProgram(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("close", (code) => resolve({ code, stdout, stderr })),
  );
}

describe("@base-context/openai-agents as its READMEs say", () => {
  const dirs = tempDirs();
  let fake: FakeOpenAI;
  const nodes = {} as Record<NodeMajor, string>;

  beforeAll(async () => {
    // Download the pinned releases from the npm registry on the first run only.
    nodes[22] = ensureNode(22);
    nodes[24] = ensureNode(24);
    fake = await startFakeOpenAI({ handler: (request) => reviewerReply(request.body) });
  }, 900_000);
  afterAll(async () => {
    await fake?.close();
    dirs.cleanup();
  });

  it.each([22, 24] as const)("runs the example under Node %i, compacting within a few turns of an 8000-token window", async (major) => {
    const home = dirs.make("bc-agents-example-");
    // As the README says: from examples/openai-agents, `BASE_CONTEXT_DAEMON=../../packages/daemon/bin/base-context.js node main.mjs`.
    const env = exampleEnv(home, fake, { MODEL: "fake-agent", CONTEXT_WINDOW: "8000" });
    const result = await runProgram(nodes[major], ["main.mjs", "10"], { cwd: EXAMPLE, env });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    const sessionId = /^session (\S+)$/.exec(lines[0]!)?.[1];
    expect(sessionId).toBeDefined();
    expect(lines.slice(1).map((line) => /^turn (\d+): /.exec(line)?.[1])).toEqual(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]);
    const compacted = lines.filter((line) => line.endsWith("[compacted]")).map((line) => Number(/^turn (\d+)/.exec(line)![1]));
    expect(compacted.length, result.stdout).toBeGreaterThan(0);
    expect(compacted[0]).toBeLessThanOrEqual(8);

    // `base-context tree <session id it printed>`: every turn, and the compactions (a summary, or old tool outputs pruned).
    const tree = await runCli(["tree", sessionId!], { home });
    expect(tree.code, tree.stderr).toBe(0);
    expect(tree.stdout).toMatch(/user: Start: list the top folder/);
    expect(tree.stdout).toMatch(/compaction|pruned: \d+ tool outputs? hidden/);
  }, 180_000);

  // This clone's addon is built for the tests' Node: under Node 24 the daemon switches to that Node. Told not to, it says what to run.
  it.skipIf(process.versions.modules === NODE_ABIS[24])(
    "under Node 24 with the switch off, the example says which command to run, with no stack trace",
    async () => {
      const home = dirs.make("bc-agents-example-abi-");
      const env = exampleEnv(home, fake, { BASE_CONTEXT_REEXEC: "off" });
      const result = await runProgram(nodes[24], ["main.mjs", "1"], { cwd: EXAMPLE, env });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^BaseContextError: the daemon refused session\/create: .*better-sqlite3's native addon was built for Node \d+/m);
      expect(result.stderr).toMatch(/Rebuild the addon with this Node first on PATH \(.+\): cd ".+" && npx --yes pnpm@10\.34\.9 rebuild -r better-sqlite3/);
      expect(result.stderr).toMatch(/Or run base-context with the Node the addon was built for/);
      expect(result.stderr).not.toMatch(/^\s+at /m);
    },
    60_000,
  );

  it("installs from `pnpm tarballs` into an empty app with npm and runs there under Node 24, the daemon from the PATH", async () => {
    const tarballs = dirs.make("bc-agents-tarballs-");
    const packed = await run(process.execPath, [join(ROOT, "scripts", "pack-tarballs.mjs"), tarballs], { env: userEnv({}) });
    const line = packed.stdout.split("\n").findIndex((text) => text.startsWith("An OpenAI Agents SDK app"));
    const install = packed.stdout.split("\n")[line + 1]!.trim().split(/\s+/);
    expect(install.slice(0, 2)).toEqual(["npm", "install"]);
    expect(install.slice(2).map((file) => file.slice(tarballs.length + 1))).toEqual([
      "base-context-openai-agents-0.1.0.tgz",
      "base-context-core-0.1.0.tgz",
      "base-context-protocol-0.1.0.tgz",
    ]);

    const app = dirs.make("bc-agents-app-");
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "agents-app", private: true, type: "module" }));
    await run("npm", [...install.slice(1), "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: app, env: userEnv({}) });
    writeFileSync(join(app, "app.mjs"), APP_SOURCE);

    // `node` is Node 24 (the app's), `base-context` the clone's command as `npm link` links it (its shebang finds that node).
    const bin = join(app, "bin");
    mkdirSync(bin);
    symlinkSync(nodes[24], join(bin, "node"));
    symlinkSync(DAEMON_BIN, join(bin, "base-context"));
    const home = dirs.make("bc-agents-app-home-");
    const env = userEnv({
      ...storeEnvFor(home),
      PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`,
      BASE_CONTEXT_HOME: home,
      OPENAI_API_KEY: "test",
      OPENAI_BASE_URL: fake.baseURL,
    });
    const result = await runProgram("node", ["app.mjs"], { cwd: app, env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^node v24\./);
    expect(result.stdout).toMatch(/^turn 12: /m);
    expect(result.stdout).toMatch(/compaction committed/);
  }, 300_000);
});

/** An app as the package README shows it: a BaseContextSession, `session.run`, a tool. */
const APP_SOURCE = `import { Agent, OpenAIChatCompletionsModel, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { BaseContextSession } from "@base-context/openai-agents";

console.log("node " + process.version);
const model = new OpenAIChatCompletionsModel(new OpenAI(), "fake-agent");
const readFile = tool({
  name: "read_file",
  description: "Reads a file",
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => path + ":\\n" + "a line of the file\\n".repeat(200),
});
const agent = new Agent({ name: "reader", instructions: "Read the files asked for.", model, tools: [readFile] });
const session = new BaseContextSession({ contextWindow: 8_000, model });
try {
  for (let turn = 1; turn <= 12; turn++) {
    const result = await session.run(agent, "Turn " + turn + ": read src/file" + turn + ".ts");
    const last = session.lastCompaction;
    console.log("turn " + turn + ": " + result.finalOutput + (last && "result" in last ? " (compaction " + last.result.status + ")" : ""));
  }
} finally {
  await session.close();
}
`;
