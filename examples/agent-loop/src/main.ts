#!/usr/bin/env node
/**
 * The agent loop as a command: starts the daemon, opens a session, runs the prompts through any
 * OpenAI-compatible endpoint with two workspace tools, and logs every turn to stderr (the model's
 * answers go to stdout).
 */
import { CompactionDidStart, ContextUsage, SettingsGet } from "@base-context/protocol";
import OpenAI from "openai";
import { createInterface } from "node:readline";
import { parseCli, USAGE, UsageError, type CliOptions } from "./args.js";
import { startDaemon, stopDaemon, watchDaemon } from "./daemon.js";
import { Inbox } from "./inbox.js";
import { describeEvent } from "./log.js";
import { runAgentLoop, type AgentEvent } from "./loop.js";
import { answerSummaryRequests } from "./summaries.js";
import { openSession } from "./session.js";
import { workspaceTools } from "./tools.js";

/** Stored as each reply's `provider`. */
const PROVIDER = "openai-compatible";

/**
 * What the daemon will summarize with, for the log. This loop offers its own model, so with
 * `auto` (the default) the daemon's summaries are written by it.
 */
function summarizerText(
  summarizer: { provider: string; model?: string | undefined; baseURL?: string | undefined },
  agentModel: string,
): string {
  if (summarizer.provider === "extractive") return "extractive (offline), as the daemon's settings say";
  if (summarizer.provider === "openai")
    return `model ${summarizer.model ?? "(its default)"} at ${summarizer.baseURL ?? "the OpenAI API"}, as the daemon's settings say`;
  return `this agent's model ${agentModel} (the daemon asks it with model/complete)`;
}

/** The options and the API key, or the exit code when there is nothing to run (help printed, or what is wrong said). */
function readOptions(argv: string[]): { options: CliOptions; apiKey: string } | number {
  let options: CliOptions;
  try {
    const parsed = parseCli(argv);
    if (parsed === "help") {
      process.stdout.write(USAGE);
      return 0;
    }
    options = parsed;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`agent-loop: ${error.message}\nRun with --help for usage.\n`);
    return 2;
  }
  const apiKey = process.env[options.apiKeyEnv];
  if (!apiKey) {
    process.stderr.write(`agent-loop: ${options.apiKeyEnv} is not set: it must hold the API key of ${options.baseURL} ` +
      "(any value for a server without keys; --api-key-env names another variable)\n");
    return 2;
  }
  return { options, apiKey };
}

/** The prompts to send: those of the command line, then, with `--stdin`, each line read. */
function promptInbox(options: CliOptions): { inbox: Inbox; stdin?: ReturnType<typeof createInterface> } {
  const inbox = new Inbox(options.prompts);
  if (!options.readStdin) {
    inbox.close();
    return { inbox };
  }
  const stdin = createInterface({ input: process.stdin });
  stdin.on("line", (line) => {
    if (line.trim() !== "") inbox.push(line);
  });
  stdin.on("close", () => inbox.close());
  return { inbox, stdin };
}

/** An event's log lines on stderr, and a final answer (a reply with text and no tool call) on stdout. */
function showEvent(event: AgentEvent, log: (line: string) => void): void {
  for (const line of describeEvent(event)) log(line);
  if (event.type === "reply" && event.message.stopReason !== "error" && event.message.stopReason !== "aborted") {
    const text = event.message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
    const final = !event.message.content.some((block) => block.type === "toolCall");
    if (final && text.trim() !== "") process.stdout.write(`${text}\n`);
  }
}

async function main(argv: string[]): Promise<number> {
  const read = readOptions(argv);
  if (typeof read === "number") return read;
  const { options, apiKey } = read;
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const spawned = startDaemon();
  const daemonLog = watchDaemon(spawned, options.verbose);
  const controller = new AbortController();
  let interrupts = 0;
  const onInterrupt = (): void => {
    if (++interrupts > 1) process.exit(130);
    log("[stopping] interrupted: aborting the model call (again to quit at once)");
    controller.abort();
  };
  process.on("SIGINT", onInterrupt);
  let stdin: ReturnType<typeof createInterface> | undefined;

  try {
    const { client } = spawned;
    const openai = new OpenAI({ baseURL: options.baseURL, apiKey });
    // Before initialize: the client then offers its model, and the daemon's summaries use it.
    answerSummaryRequests(client, { openai, model: options.model }, (event) =>
      log(
        event.error
          ? `[summary] ${event.purpose}: the model failed (${event.error}); the daemon falls back`
          : `[summary] ${event.purpose} written by ${options.model}`,
      ),
    );
    await client.initialize({ clientInfo: { name: "agent-loop" }, projectDir: options.cwd });
    const { settings, sources } = await client.request(SettingsGet, { projectDir: options.cwd });
    const automatic = settings.compaction.enabled && settings.context.mode === "on";
    // The threshold is the window less the reserve: a window no larger than a reserve the user set
    // cannot hold a turn (one left unset is capped at a quarter of the window by the daemon).
    const reserveSet = sources["compaction.reserveTokens"] !== "default";
    if (automatic && reserveSet && options.contextWindow <= settings.compaction.reserveTokens) {
      process.stderr.write(
        `agent-loop: --context-window ${options.contextWindow} is too small: the daemon keeps ${settings.compaction.reserveTokens} tokens ` +
          "of the window free for the reply and the summary (compaction.reserveTokens); give a larger window\nRun with --help for usage.\n",
      );
      return 2;
    }
    const { sessionId, created, entryCount } = await openSession(client, {
      sessionId: options.sessionId,
      cwd: options.cwd,
      name: options.prompts[0]?.slice(0, 80),
      provider: PROVIDER,
      model: options.model,
    });
    log(
      `[session] ${sessionId} (${created ? "new" : `continued, ${entryCount} entries`}); model ${options.model}, context window ${options.contextWindow} tokens`,
    );
    // The sizes as the daemon applies them to this window, and settings of the user's that cannot fit it.
    const applied = await client.request(ContextUsage, { sessionId, contextWindow: options.contextWindow });
    const compacts = automatic
      ? `compacts above ${applied.threshold} tokens, keeps ~${applied.settings.keepRecentTokens}`
      : "automatic compaction is off";
    log(`[daemon] ${compacts}; summarizer: ${summarizerText(settings.summarizer, options.model)}`);
    if (applied.reason?.includes("cannot fit")) log(`[daemon] warning: ${applied.reason}`);
    client.onNotification(CompactionDidStart, (params) => {
      if (params.sessionId === sessionId) log(`[compaction] ${params.reason} compaction started…`);
    });

    const prompts = promptInbox(options);
    stdin = prompts.stdin;
    const result = await runAgentLoop(
      {
        daemon: client,
        sessionId,
        openai,
        model: options.model,
        provider: PROVIDER,
        contextWindow: options.contextWindow,
        tools: workspaceTools(options.cwd),
        maxSteps: options.maxSteps,
        signal: controller.signal,
        onEvent: (event: AgentEvent) => showEvent(event, log),
      },
      prompts.inbox,
    );
    if (result.unsent.length > 0) log(`[stopped] ${result.unsent.length} prompt(s) not sent`);
    log(`[done] ${result.modelCalls} model calls, ${result.compactions} compaction(s), ${result.failures} failed; session ${sessionId}`);
    return result.ok ? 0 : 1;
  } catch (error) {
    log(`agent-loop: ${error instanceof Error ? error.message : String(error)}`);
    const tail = daemonLog.tail();
    if (!options.verbose && tail) log(`daemon log (last lines):\n${tail}`);
    return 1;
  } finally {
    stdin?.close();
    process.off("SIGINT", onInterrupt);
    await stopDaemon(spawned);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`agent-loop: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
