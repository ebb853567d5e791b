/**
 * The real pi with the Base Context extension (examples/pi-extension), used the way its users use
 * it headlessly: `pi --mode rpc -e …`, a custom OpenAI-compatible provider pointing at the local
 * fake server, pi's agent folder in a temporary folder. pi's own session file is the evidence.
 *
 * - compact: the compaction entry's summary came through the daemon (a daemon plugin's marker,
 *   written with pi's own model lent through `model/complete`), with the retention report in
 *   `details`;
 * - tree navigation with a summary (the extension's `/bc-navigate`, since RPC mode has no tree
 *   command): the branch_summary entry came through the daemon too;
 * - with the daemon gone before `compact`, pi compacts with its own summarizer and the user sees
 *   one warning, nothing more.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DAEMON_MAIN } from "./support/daemon.js";
import { reply, useFakeOpenAI, type FakeChatRequestBody } from "./support/fake-openai.js";
import {
  FAKE_THINKING_MODEL,
  FAKE_THINKING_PROVIDER,
  PI_EXTENSION,
  PI_SDK,
  startPi,
  writePiAgentDir,
  type PiOutput,
  type PiRpc,
  type PiSetup,
} from "./support/pi-rpc.js";
import { hookPlugin, pluginsRoot, writePlugin } from "./support/plugins.js";
import { tempDirs } from "./support/temp-dir.js";
import { waitFor } from "./support/wait.js";
import { storeEnvFor } from "./support/engine.js";
import { TEST_NODE } from "./support/test-node.js";

/** What pi's own summarizer writes (the fake server answers pi's summarization prompt with it). */
const PI_OWN_SUMMARY = "## Goal\nWritten by pi's own summarizer (PI-OWN)";
/** What pi's model answers when the daemon's plugin asks it through the extension. */
const LENT_MODEL_ANSWER = "LENT-MODEL-ANSWER";

/** Set by the cancellation test: pi's model never answers the plugin's question. */
let lentModelHangs = false;

const fake = useFakeOpenAI({
  handler: (request) => {
    const text = requestText(request.body);
    if (text.includes("Base Context plugin asks")) return lentModelHangs ? reply.hang() : reply.text(LENT_MODEL_ANSWER);
    // pi's built-in compaction and branch summaries send the conversation in <conversation> tags.
    if (text.includes("<conversation>")) return reply.text(PI_OWN_SUMMARY);
    return reply.text(`Answer ${text.length}: done, src/config.ts now loads empty files.`);
  },
});

const dirs = tempDirs();
const running: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of running.splice(0).reverse()) await stop();
  dirs.cleanup();
});

/** A daemon plugin whose summaries carry a marker and the answer of the model the daemon offers (pi's). */
const MARKER_PLUGIN = hookPlugin({
  compact: `
    const answer = await ctx.complete({ prompt: "Base Context plugin asks: one word?", maxTokens: 20 });
    const p = event.preparation;
    return { compaction: {
      summary: "## Goal\\nFix src/config.ts (MARKER-DAEMON-COMPACT, model said " + answer.text + ")",
      firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore, details: { by: "marker" } } };`,
  tree: `
    return { summary: { summary: "MARKER-DAEMON-TREE of " + event.preparation.entriesToSummarize.length + " entries", details: { by: "marker" } } };`,
});

interface World {
  pi: PiRpc;
  home: string;
}

/** pi in a fresh project, its agent folder and the daemon's home in temporary folders. */
async function world(
  options: {
    env?: Record<string, string | undefined>;
    install?: "flag" | "project";
    /** Install the marker plugin in the daemon's home (default true). */
    plugin?: boolean;
    /** pi's compaction settings (default: keep 1 token, so every turn but the last is summarized). */
    compaction?: PiSetup["compaction"];
    args?: string[];
  } = {},
): Promise<World> {
  const home = dirs.make("bc-pi-home-");
  if (options.plugin !== false) writePlugin(pluginsRoot(home), "marker", MARKER_PLUGIN);
  const pi = await startPi({
    agentDir: join(dirs.make("bc-pi-agent-"), "agent"),
    cwd: dirs.make("bc-pi-project-"),
    baseURL: fake.baseURL,
    compaction: options.compaction ?? { keepRecentTokens: 1 },
    env: { BASE_CONTEXT_HOME: home, ...storeEnvFor(home), ...options.env },
    ...(options.install ? { install: options.install } : {}),
    ...(options.args ? { args: options.args } : {}),
  });
  running.push(() => pi.close());
  return { pi, home };
}

async function twoTurns(pi: PiRpc): Promise<void> {
  await pi.prompt("The config loader crashes on an empty file. Fix src/config.ts.");
  await pi.prompt("Now make sure the tests cover the empty file.");
  await pi.prompt("Thanks. Anything else?");
  const state = await pi.command({ type: "get_state" });
  expect(state.success).toBe(true);
}

const notifications = (pi: PiRpc) => pi.output.filter((line) => line.type === "extension_ui_request" && line["method"] === "notify");
const uiRequests = (pi: PiRpc, method: string) =>
  pi.output.filter((line) => line.type === "extension_ui_request" && line["method"] === method);
/** The extension's widget above pi's editor, each time it was set with lines (a warning, a fallback). */
const warningsShown = (pi: PiRpc) =>
  uiRequests(pi, "setWidget").filter((line) => line["widgetKey"] === "base-context" && line["widgetLines"] !== undefined);
/** The extension's footer status line, as last set. */
const footerStatus = (pi: PiRpc) =>
  uiRequests(pi, "setStatus")
    .filter((line) => line["statusKey"] === "base-context")
    .at(-1)?.["statusText"];
const errorsShown = (pi: PiRpc) =>
  pi.output.filter(
    (line: PiOutput) => line.type === "extension_error" || (line.type === "extension_ui_request" && line["notifyType"] === "error"),
  );

/** The real pi: a process start, three model turns and a daemon start per test. */
const PI_TEST = { timeout: 120_000 };

describe("pi with the Base Context extension", PI_TEST, () => {
  it("compacts through the daemon: pi's session file holds the daemon's summary with its retention report", async () => {
    const { pi } = await world();
    await twoTurns(pi);

    const compacted = await pi.command({ type: "compact" }, 90_000);
    expect(compacted.success, compacted.error).toBe(true);

    const entries = pi.sessionLines().filter((line) => line["type"] === "compaction");
    expect(entries).toHaveLength(1);
    const entry = entries[0]!;
    expect(entry["summary"]).toContain("MARKER-DAEMON-COMPACT");
    // The plugin's ctx.complete was answered by pi's model, lent to the daemon by the extension.
    expect(entry["summary"]).toContain(LENT_MODEL_ANSWER);
    expect(entry["fromHook"]).toBe(true);
    const details = entry["details"] as {
      by: string;
      retention: { files: unknown; requests: { kept: number; total: number }; missing: unknown };
    };
    expect(details.by).toBe("marker");
    expect(details.retention.requests.total).toBeGreaterThan(0);
    expect(details.retention.missing).toBeDefined();
    expect(errorsShown(pi)).toEqual([]);
    // Who wrote it and what it kept, in pi's footer (it outlives the chat rebuild); nothing to warn about.
    expect(footerStatus(pi)).toMatch(/^Base Context: compaction by plugin global:marker · kept \d+\/\d+ /);
    expect(warningsShown(pi)).toEqual([]);
  });

  it("compacts a short session like pi does: nothing to summarize is an answer, not a failure", async () => {
    // pi's default keepRecentTokens keeps the whole short session: pi sends no message to summarize.
    const { pi } = await world({ plugin: false, compaction: {} });
    await twoTurns(pi);
    const compacted = await pi.command({ type: "compact" }, 90_000);
    expect(compacted.success, compacted.error).toBe(true);

    const entry = pi.sessionLines().find((line) => line["type"] === "compaction")!;
    expect(entry["fromHook"]).toBe(true);
    expect(entry["summary"]).toBe("No prior history.");
    expect(entry["details"]).toMatchObject({ summarizer: "none" });
    expect(warningsShown(pi)).toEqual([]);
    expect(notifications(pi)).toEqual([]);
    expect(footerStatus(pi)).toMatch(/^Base Context: compaction by nobody \(nothing new/);
  });

  it("lends pi's model at pi's thinking level", async () => {
    const earlier = fake.requests.length;
    const { pi } = await world({ args: ["--provider", FAKE_THINKING_PROVIDER, "--model", FAKE_THINKING_MODEL, "--thinking", "high"] });
    await twoTurns(pi);
    const compacted = await pi.command({ type: "compact" }, 90_000);
    expect(compacted.success, compacted.error).toBe(true);
    const lent = fake.requests.slice(earlier).filter((request) => requestText(request.body).includes("Base Context plugin asks"));
    expect(lent).toHaveLength(1);
    expect(lent[0]!.body!.model).toBe(FAKE_THINKING_MODEL);
    expect(lent[0]!.body!.reasoning_effort).toBe("high");

    // A new level applies to the next loan.
    expect((await pi.command({ type: "set_thinking_level", level: "low" })).success).toBe(true);
    await pi.prompt("One more thing: keep the API unchanged.");
    expect((await pi.command({ type: "compact" }, 90_000)).success).toBe(true);
    const next = fake.requests.slice(earlier).filter((request) => requestText(request.body).includes("Base Context plugin asks"));
    expect(next).toHaveLength(2);
    expect(next[1]!.body!.reasoning_effort).toBe("low");
  });

  it("navigates pi's tree with a summary written through the daemon (installed in the project's .pi/extensions)", async () => {
    const { pi } = await world({ install: "project" });
    await twoTurns(pi);
    const messages = pi.sessionLines().filter((line) => line["type"] === "message");
    const firstReply = messages.find((line) => (line["message"] as { role: string }).role === "assistant")!;

    const navigated = await pi.command({ type: "prompt", message: `/bc-navigate ${String(firstReply["id"])} first-try` });
    expect(navigated.success, navigated.error).toBe(true);

    const summary = await waitFor(() => pi.sessionLines().find((line) => line["type"] === "branch_summary"), { timeoutMs: 60_000 });
    expect(summary["summary"]).toMatch(/MARKER-DAEMON-TREE of \d+ entries/);
    expect(summary["parentId"]).toBe(firstReply["id"]);
    expect(summary["details"]).toMatchObject({ by: "marker", retention: { requests: { total: expect.any(Number) } } });
    expect(errorsShown(pi)).toEqual([]);
    expect(footerStatus(pi)).toMatch(/^Base Context: branch summary by plugin global:marker · /);
  });

  it("falls back to pi's own compaction with a warning when the daemon is gone", async () => {
    // A shared daemon over a socket, killed after pi connected to it.
    const socketDir = dirs.make("bc-pi-socket-");
    const socketPath = join(socketDir, "daemon.sock");
    const home = dirs.make("bc-pi-shared-home-");
    writePlugin(pluginsRoot(home), "marker", MARKER_PLUGIN);
    const daemon = spawn(TEST_NODE, [DAEMON_MAIN, "serve", "--socket", socketPath], {
      env: { ...process.env, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), OPENAI_API_KEY: "" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const daemonExited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
    running.push(async () => {
      if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill("SIGKILL");
      await daemonExited;
    });
    await waitFor(() => existsSync(socketPath), { timeoutMs: 20_000 });

    const { pi } = await world({ env: { BASE_CONTEXT_SOCKET: socketPath } });
    await twoTurns(pi);
    daemon.kill("SIGKILL");
    await daemonExited;

    const compacted = await pi.command({ type: "compact" }, 90_000);
    expect(compacted.success, compacted.error).toBe(true);
    const entry = pi.sessionLines().find((line) => line["type"] === "compaction")!;
    expect(entry["summary"]).toContain("PI-OWN");
    expect(entry["fromHook"]).not.toBe(true);

    expect(errorsShown(pi)).toEqual([]);
    // One warning, in the widget above the editor (a notification would be wiped by pi's chat rebuild).
    expect(notifications(pi)).toEqual([]);
    const shown = warningsShown(pi);
    expect(shown).toHaveLength(1);
    expect(shown[0]!["widgetLines"]).toEqual([expect.stringMatching(/^⚠ Base Context: compaction by the daemon at .* failed \(.*\); pi writes it instead$/)]);
    expect(footerStatus(pi)).toBe("Base Context ⚠ compaction: daemon failed, pi wrote it");
  });
});

describe("cancelling pi's compaction", PI_TEST, () => {
  const SDK_ABORT = fileURLToPath(new URL("./support/pi-sdk-abort.mjs", import.meta.url));

  it("cancels the daemon's work down to the model call pi lent it, and pi's compaction ends cancelled", async () => {
    lentModelHangs = true;
    // The server is the file's: requests of earlier tests are not this one's.
    const earlier = fake.requests.length;
    running.push(async () => {
      lentModelHangs = false;
    });
    const home = dirs.make("bc-pi-home-");
    writePlugin(pluginsRoot(home), "marker", MARKER_PLUGIN);
    const agentDir = join(dirs.make("bc-pi-agent-"), "agent");
    writePiAgentDir({ agentDir, baseURL: fake.baseURL, compaction: { keepRecentTokens: 1 } });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      PI_TELEMETRY: "0",
      BASE_CONTEXT_HOME: home,
      ...storeEnvFor(home),
    };
    delete env["OPENAI_API_KEY"];
    const child = spawn(
      TEST_NODE,
      [SDK_ABORT, PI_SDK, PI_EXTENSION, "Fix src/config.ts for empty files.", "Add a test for it.", "Thanks."],
      {
        cwd: dirs.make("bc-pi-project-"),
        env,
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    running.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const said: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout }).on("line", (line) => said.push(JSON.parse(line) as Record<string, unknown>));

    const lentCall = await waitFor(
      () => fake.requests.slice(earlier).find((request) => requestText(request.body).includes("Base Context plugin asks")),
      {
        timeoutMs: 90_000,
        message: "the daemon's plugin never reached pi's model",
      },
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${stderr}\n${JSON.stringify(said)}`);
    });
    expect(said).toContainEqual({ compacting: true });
    child.stdin.write("abort\n");

    const ended = await waitFor(() => said.find((line) => "ended" in line), { timeoutMs: 30_000 });
    expect(ended).toMatchObject({ ended: "rejected" });
    expect(String(ended["error"])).toMatch(/cancel|abort/i);
    // pi's abort reached the daemon ($/cancelRequest), which cancelled the plugin, whose model call
    // the daemon cancelled in turn (model/complete): the extension stopped pi's request to the model.
    await waitFor(() => lentCall.disconnected, { timeoutMs: 30_000, message: "pi's lent model call was never cancelled" });
    expect(said.filter((line) => "extensionError" in line)).toEqual([]);
  });
});

describe("pi without a daemon", PI_TEST, () => {
  it("compacts with pi's own summarizer and one warning when the daemon cannot be started", async () => {
    const { pi } = await world({ env: { BASE_CONTEXT_DAEMON: join(dirs.make("bc-pi-nothing-"), "base-context") } });
    await twoTurns(pi);

    const compacted = await pi.command({ type: "compact" }, 90_000);
    expect(compacted.success, compacted.error).toBe(true);
    expect(pi.sessionLines().find((line) => line["type"] === "compaction")!["summary"]).toContain("PI-OWN");
    expect(errorsShown(pi)).toEqual([]);
    expect(notifications(pi)).toEqual([]);
    const shown = warningsShown(pi);
    expect(shown).toHaveLength(1);
    expect(String((shown[0]!["widgetLines"] as string[])[0])).toMatch(/pi writes it instead/);
    expect(String((shown[0]!["widgetLines"] as string[])[0])).toMatch(/ENOENT|not found/);
  });

  it("says in /bc-status that the daemon is not running, and why", async () => {
    const { pi } = await world({ env: { BASE_CONTEXT_DAEMON: join(dirs.make("bc-pi-nothing-"), "base-context") } });
    const done = await pi.command({ type: "prompt", message: "/bc-status" });
    expect(done.success, done.error).toBe(true);
    const shown = await waitFor(() => notifications(pi).at(-1));
    expect(shown).toMatchObject({ notifyType: "info" });
    expect(String(shown["message"])).toMatch(/^Base Context\nDaemon: not running — the daemon \(.*\): .*(ENOENT|not found)/);
    expect(String(shown["message"])).toContain("Last summary: none yet in this pi session");
  });
});

function requestText(body: FakeChatRequestBody | undefined): string {
  return (body?.messages ?? [])
    .map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)))
    .join("\n");
}
