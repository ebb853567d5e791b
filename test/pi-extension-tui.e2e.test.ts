/**
 * The real pi's terminal UI with the Base Context extension, in a real pseudo-terminal (tmux):
 * what a pi user sees. A compaction ends with pi clearing and rebuilding its chat, which wipes
 * any notification posted before; the extension's warnings and the summary's writer must still be
 * on screen after it (a widget above the editor, the footer's status line).
 *
 * - pi lists the extension as `base-context` under [Extensions];
 * - the daemon cannot be started: pi compacts by itself and one warning is on screen after;
 * - pi's model fails (HTTP 500) while lent to the daemon: the extractive fallback writes the
 *   summary and the screen says so, with the reason;
 * - `/bc-status` shows the daemon (version, store) and the last summary's writer and retention.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { reply, useFakeOpenAI, type FakeChatRequestBody } from "./support/fake-openai.js";
import { FAKE_MODEL, FAKE_PROVIDER, PI_CLI, PI_EXTENSION, writePiAgentDir } from "./support/pi-rpc.js";
import { onPostgres, storeEnvFor } from "./support/engine.js";
import { tempDirs } from "./support/temp-dir.js";
import { openTerminal, type Terminal } from "./support/tmux.js";
import { waitFor } from "./support/wait.js";

/** Set by the fallback test: pi's model answers every summarization request with HTTP 500. */
let summariesFail = false;

const fake = useFakeOpenAI({
  handler: (request) => {
    const text = requestText(request.body);
    if (text.includes("<conversation>")) {
      return summariesFail ? reply.error(500, "The server had an error while processing your request") : reply.text(PI_OWN_SUMMARY);
    }
    return reply.text("Done: src/config.ts now loads empty files.");
  },
});

const PI_OWN_SUMMARY = "## Goal\nWritten by a model summarizer (MODEL-SUMMARY)";

const dirs = tempDirs();
const terminals: Terminal[] = [];
afterEach(() => {
  summariesFail = false;
  for (const terminal of terminals.splice(0)) terminal.close();
  dirs.cleanup();
});

/** pi in a terminal wide enough for the footer, in a fresh project, its agent folder and the daemon's home in temporary folders. */
async function piInTerminal(env: Record<string, string> = {}): Promise<{ terminal: Terminal; home: string }> {
  const home = dirs.make("bc-pi-tui-home-");
  // One attempt per model: a failing model falls back at once.
  writeFileSync(join(home, "settings.json"), JSON.stringify({ summarizer: { maxRetries: 0 } }));
  const agentDir = join(dirs.make("bc-pi-tui-agent-"), "agent");
  writePiAgentDir({ agentDir, baseURL: fake.baseURL, compaction: { keepRecentTokens: 1 } });
  const terminal = openTerminal(
    dirs.make("bc-pi-tui-term-"),
    [process.execPath, PI_CLI, "--provider", FAKE_PROVIDER, "--model", FAKE_MODEL, "-e", PI_EXTENSION],
    {
      PATH: process.env["PATH"] ?? "",
      HOME: dirs.make("bc-pi-tui-user-"),
      TERM: "xterm-256color",
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      PI_TELEMETRY: "0",
      BASE_CONTEXT_HOME: home,
      ...storeEnvFor(home),
      ...env,
    },
    { width: 160, height: 40 },
  );
  terminals.push(terminal);
  return { terminal, home };
}

/** How long a screen must stay the same to count as drawn. */
const STEADY_MS = 300;

/** Types a line into pi's editor and submits it. */
function type(terminal: Terminal, line: string): void {
  terminal.keys([line], { literal: true });
  terminal.keys(["Enter"]);
}

/**
 * Waits until the screen, its lines joined (pi wraps long lines), shows every part and has stopped
 * changing: pi draws a screen in several writes, and a capture taken between two of them can hold
 * a line both where it was and where it is going (counted twice) or only part of it.
 */
async function waitForShown(terminal: Terminal, parts: readonly string[], timeoutMs = 60_000): Promise<string> {
  let last = "";
  let sameSince = 0;
  try {
    return await waitFor(
      () => {
        const now = terminal.screen();
        if (now !== last) [last, sameSince] = [now, Date.now()];
        const flat = last.replace(/\s+/g, " ");
        return parts.every((part) => flat.includes(part)) && Date.now() - sameSince >= STEADY_MS ? last : undefined;
      },
      { timeoutMs, intervalMs: 50, message: `screen showing ${parts.join(" … ")}` },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\n--- last screen ---\n${last}`);
  }
}

/**
 * Two prompts answered, then `/compact`, waiting for pi's compaction summary in the rebuilt chat
 * and for `shown` (a screen is drawn in several writes: one capture may hold only part of it).
 */
async function workThenCompact(terminal: Terminal, shown: readonly string[]): Promise<string> {
  type(terminal, "The config loader crashes on an empty file. Fix src/config.ts.");
  await waitForShown(terminal, ["Done: src/config.ts now loads empty files."]);
  type(terminal, "Thanks. Add a test for it.");
  await waitFor(() => (terminal.screen().match(/Done: src\/config\.ts now loads empty files\./g) ?? []).length >= 2, { timeoutMs: 60_000 });
  type(terminal, "/compact");
  // pi's compaction summary, added after the chat was cleared and rebuilt.
  return waitForShown(terminal, ["Compacted from", ...shown], 90_000);
}

const TUI_TEST = { timeout: 180_000 };

describe("pi's terminal with the Base Context extension", TUI_TEST, () => {
  it("keeps the warning on screen after pi's own compaction when the daemon cannot be started", async () => {
    const { terminal } = await piInTerminal({ BASE_CONTEXT_DAEMON: join(dirs.make("bc-pi-nothing-"), "base-context") });
    // pi names the extension after its folder: base-context, not src.
    const start = await waitForShown(terminal, ["[Extensions]", "base-context"], 60_000);
    expect(start).toMatch(/\[Extensions\]\n +base-context\n/);

    const after = await workThenCompact(terminal, ["⚠ Base Context: compaction by the daemon", "pi writes it instead", "Base Context ⚠"]);
    const flat = after.replace(/\s+/g, " ");
    expect(flat).toMatch(/ENOENT|not found/);
    // One warning: the widget, once (the footer only says where to look).
    expect(flat.split("pi writes it instead")).toHaveLength(2);
    expect(flat).toContain("Base Context ⚠ compaction: daemon failed, pi wrote it");
  });

  it("keeps the warning on screen after /tree → Summarize when the daemon cannot be started", async () => {
    const { terminal } = await piInTerminal({ BASE_CONTEXT_DAEMON: join(dirs.make("bc-pi-nothing-"), "base-context") });
    await waitForShown(terminal, ["[Extensions]"], 60_000);
    type(terminal, "The config loader crashes on an empty file. Fix src/config.ts.");
    await waitForShown(terminal, ["Done: src/config.ts now loads empty files."]);
    type(terminal, "Thanks. Add a test for it.");
    await waitFor(() => (terminal.screen().match(/Done: src\/config\.ts now loads empty files\./g) ?? []).length >= 2, { timeoutMs: 60_000 });

    // Back to an earlier entry of the tree, with a summary of the branch left.
    type(terminal, "/tree");
    await waitForShown(terminal, ["Thanks. Add a test for it."]);
    terminal.keys(["Up"]);
    terminal.keys(["Up"]);
    terminal.keys(["Enter"]);
    await waitForShown(terminal, ["Summarize branch?", "Summarize with custom prompt"]);
    terminal.keys(["Down"]);
    terminal.keys(["Enter"]);

    const after = await waitForShown(
      terminal,
      ["Navigated to selected point", "⚠ Base Context: branch summary by the daemon", "pi writes it instead", "Base Context ⚠ branch summary"],
      90_000,
    );
    const flat = after.replace(/\s+/g, " ");
    expect(flat).toMatch(/ENOENT|not found/);
    expect(flat.split("pi writes it instead")).toHaveLength(2);
  });

  it("says on screen that the summary came from the fallback, and why, when pi's lent model fails", async () => {
    summariesFail = true;
    const { terminal, home } = await piInTerminal();
    await waitForShown(terminal, ["[Extensions]"], 60_000);
    const after = await workThenCompact(terminal, ["⚠ Base Context: this compaction came from a fallback", "wrote it instead", "(fallback)"]);
    const flat = after.replace(/\s+/g, " ");
    expect(flat).toContain(
      "⚠ Base Context: this compaction came from a fallback: pi's model failed (500 The server had an error while processing your request);" +
        " the extractive summarizer wrote it instead",
    );
    expect(flat).toContain("Base Context: compaction by the extractive summarizer (fallback)");

    type(terminal, "/bc-status");
    const store = onPostgres ? "Store: PostgreSQL postgres" : `Store: SQLite ${join(home, "sessions.db")}`;
    const status = (
      await waitForShown(terminal, ["Daemon: running, base-context", store, "Last summary: compaction at", "Fallback: pi's model failed (500 ", "Retention: kept"])
    ).replace(/\s+/g, " ");
    expect(status).toMatch(/Daemon: running, base-context \d+\.\d+\.\d+ \(pid \d+/);
    expect(status).toMatch(/Last summary: compaction at .* written by the extractive summarizer/);
    expect(status).toMatch(/Retention: kept \d+\/\d+ /);
  });
});

function requestText(body: FakeChatRequestBody | undefined): string {
  return (body?.messages ?? [])
    .map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)))
    .join("\n");
}
