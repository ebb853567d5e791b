/**
 * `base-context show <session> [--leaf id] [--format native|openai-chat] [--brief] [--json]`:
 * the context exactly as the daemon would hand it to a client for the LLM, message by message,
 * with token counts and the total.
 */
import type { ContextMessage, OpenAIChatMessage, RetentionReport } from "@base-context/protocol";
import { choiceOption, flag, JSON_OPTION, stringOption, type CommandSpec } from "./args.js";
import { viewNativeMessage, type MessageView } from "../context/message-view.js";
import { viewOpenAIMessage } from "./context-view.js";
import { withDaemon } from "./open-daemon.js";
import { displayPath, formatCount, lineWidth, oneLine, plural, processIo, styleFor, writeJson, type CliIo } from "./output.js";
import { lostLine, retentionLine, retentionOf } from "./retention-line.js";
import { runCommand } from "./run.js";
import { resolveSessionId } from "./session-ref.js";
import { countMethod, ESTIMATE_METHOD } from "./token-words.js";

/** context/usage needs a window to say whether to compact; the estimate it returns does not depend on it. */
const ESTIMATE_WINDOW = 128_000;

const FORMATS = ["native", "openai-chat"] as const;

export const SHOW_SPEC: CommandSpec = {
  name: "show",
  summary: "print a session's context as the LLM sees it, with token counts",
  description:
    "Builds the context the way context/build does (compaction summary, kept messages, branch\n" +
    "summaries) and prints every message with the tokens it counts, then the total.",
  arguments: [{ name: "session", description: "session id (or a unique start of it, at least 4 characters)" }],
  options: [
    { name: "leaf", value: "id", description: "build the context up to this entry instead of the current leaf" },
    { name: "format", value: "format", description: "native (default) or openai-chat: messages as sent to a chat-completions API" },
    { name: "brief", description: "one line per message instead of the whole text" },
    JSON_OPTION,
  ],
  examples: ["base-context show 5b0c --brief", "base-context show 5b0c7e1a-… --format openai-chat --json"],
};

interface ShownContext {
  sessionId: string;
  name?: string;
  cwd: string;
  leafId: string | null;
  format: (typeof FORMATS)[number];
  model?: { provider: string; modelId: string };
  thinkingLevel: string;
  compactionId?: string;
  /** What the compaction in force kept of what it replaced (its `details.retention`). */
  retention?: RetentionReport;
  /** The agent that summarized it when it was not Base Context (`claude-code`: imported, checked at import). */
  summarizedBy?: string;
  messages: Array<{
    index: number;
    role: string;
    label: string;
    tokens: number;
    message: ContextMessage | OpenAIChatMessage;
    text: string;
    /** A tool output a prune entry hides: the message holds its stub. */
    pruned?: true;
  }>;
  tokens: number;
  /** How `tokens` was counted. */
  countMethod: string;
  /** pi's estimate of the same context (token-words.ts); only for the current leaf. */
  estimatedTokens?: number;
  /** What the pruned outputs' stubs save (absent when nothing is pruned). */
  pruned?: { outputs: number; tokensSaved: number };
}

/** The tool call id of a tool result message, in either format. */
function toolCallIdOf(message: ContextMessage | OpenAIChatMessage): string | undefined {
  if (message.role === "toolResult" && "toolCallId" in message) return message.toolCallId;
  if (message.role === "tool" && "tool_call_id" in message) return message.tool_call_id;
  return undefined;
}

export function showCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(SHOW_SPEC, argv, io, async (args) => {
    const format = choiceOption(args, "format", FORMATS) ?? "native";
    const leafId = stringOption(args, "leaf");
    const shown = await withDaemon(io, async (daemon): Promise<ShownContext> => {
      const sessionId = await resolveSessionId(daemon, args.arguments[0]!);
      const { session, leafId: currentLeaf } = await daemon.sessions.get({ sessionId });
      const { context, messageTokens } = await daemon.context.buildCounted({
        sessionId,
        format,
        ...(leafId !== undefined ? { leafId } : {}),
      });
      const prunedCalls = new Set(context.pruned?.toolCallIds ?? []);
      const compaction = context.compactionId ? await daemon.sessions.getEntry({ sessionId, entryId: context.compactionId }) : undefined;
      const retention = compaction?.entry.type === "compaction" ? retentionOf(compaction.entry.details) : undefined;
      const source = (compaction?.entry.details as { source?: unknown } | undefined)?.source;
      const views: MessageView[] = [];
      for (const message of context.messages) {
        views.push(
          // Native: the stored counts, which add up to the total (no tokenizer to load). OpenAI chat
          // messages are other texts, counted here.
          format === "native"
            ? viewNativeMessage(message as ContextMessage, messageTokens[views.length]!)
            : await viewOpenAIMessage(message as OpenAIChatMessage, daemon.counter),
        );
      }
      return {
        sessionId,
        ...(session.name !== undefined ? { name: session.name } : {}),
        cwd: session.cwd,
        leafId: leafId ?? currentLeaf,
        format,
        ...(context.model ? { model: context.model } : {}),
        thinkingLevel: context.thinkingLevel,
        ...(context.compactionId ? { compactionId: context.compactionId } : {}),
        ...(retention ? { retention } : {}),
        ...(typeof source === "string" ? { summarizedBy: source } : {}),
        messages: context.messages.map((message, i) => {
          const callId = toolCallIdOf(message);
          const pruned = callId !== undefined && prunedCalls.has(callId);
          return {
            index: i + 1,
            role: message.role,
            label: pruned ? `${views[i]!.label} (pruned)` : views[i]!.label,
            tokens: views[i]!.tokens,
            message,
            text: views[i]!.text,
            ...(pruned ? { pruned: true as const } : {}),
          };
        }),
        ...(context.pruned ? { pruned: { outputs: context.pruned.entryIds.length, tokensSaved: context.pruned.tokensSaved } } : {}),
        // Native: the stored counts the daemon decides with. OpenAI: what these messages count.
        tokens: format === "native" ? context.tokens : views.reduce((sum, view) => sum + view.tokens, 0),
        countMethod: countMethod(daemon.sessionSettings.forSession(sessionId).tokens),
        // The other total (token-words.ts), for the current position only: context/usage reads the leaf.
        ...(leafId === undefined || leafId === currentLeaf
          ? { estimatedTokens: (await daemon.context.usage({ sessionId, contextWindow: ESTIMATE_WINDOW })).tokens }
          : {}),
      };
    });

    if (flag(args, "json")) {
      writeJson(io, { ...shown, messages: shown.messages.map(({ text: _text, ...rest }) => rest) });
      return;
    }
    printContext(io, shown, flag(args, "brief"));
  });
}

function printContext(io: CliIo, shown: ShownContext, brief: boolean): void {
  const style = styleFor(io.stdout, io.env);
  const title = shown.name !== undefined ? ` "${shown.name}"` : "";
  const facts = [
    `leaf ${shown.leafId ?? "(none)"}`,
    shown.model ? `model ${shown.model.provider}/${shown.model.modelId}` : undefined,
    `thinking ${shown.thinkingLevel}`,
    shown.compactionId ? `compaction ${shown.compactionId}` : undefined,
    `format ${shown.format}`,
  ].filter((fact) => fact !== undefined);
  io.stdout.write(`${style.bold(`session ${shown.sessionId}`)}${title} · ${displayPath(shown.cwd)}\n${style.dim(facts.join(" · "))}\n`);
  if (shown.retention) {
    const lost = lostLine(shown.retention);
    const agent = shown.summarizedBy === "claude-code" ? "Claude Code" : shown.summarizedBy === "codex" ? "Codex" : undefined;
    const by = agent !== undefined ? ` (${agent}'s summary)` : "";
    io.stdout.write(
      `${style.dim(`compaction ${shown.compactionId}${by}: `)}${retentionLine(shown.retention)}\n${lost ? `${style.dim("lost: ")}${style.yellow(lost)}\n` : ""}`,
    );
  }
  io.stdout.write("\n");

  if (shown.messages.length === 0) io.stdout.write("The context is empty.\n\n");
  const width = Math.min(lineWidth(io), 80);
  const numberWidth = String(shown.messages.length).length;
  const tokensWidth = Math.max(0, ...shown.messages.map((m) => formatCount(m.tokens).length));
  const labelWidth = Math.max(0, ...shown.messages.map((m) => m.label.length));
  for (const message of shown.messages) {
    const count = `${formatCount(message.tokens).padStart(tokensWidth)} tokens`;
    if (brief) {
      const head = `${String(message.index).padStart(numberWidth)}  ${count}  ${message.label.padEnd(labelWidth)}  `;
      io.stdout.write(`${head}${oneLine(message.text, Math.max(20, width - head.length))}\n`);
      continue;
    }
    const heading = `── ${message.index} · ${message.label} · ${plural(message.tokens, "token")} `;
    io.stdout.write(`${style.cyan(heading + "─".repeat(Math.max(3, width - heading.length)))}\n${message.text}\n\n`);
  }
  if (brief) io.stdout.write("\n");
  io.stdout.write(
    `${style.bold(`Total: ${plural(shown.tokens, "token")}`)} in ${plural(shown.messages.length, "message")} (${shown.countMethod})\n`,
  );
  if (shown.estimatedTokens !== undefined) {
    io.stdout.write(style.dim(`Estimate: ${plural(shown.estimatedTokens, "token")} (${ESTIMATE_METHOD})`) + "\n");
  }
  if (shown.pruned) {
    io.stdout.write(
      `${style.dim(`${plural(shown.pruned.outputs, "tool output")} pruned (marked "(pruned)"): their stubs save ${formatCount(shown.pruned.tokensSaved)} tokens; the stored outputs are unchanged`)}\n`,
    );
  }
}
