/**
 * The extension in the real VS Code: code-server with the packaged .vsix installed, driven by
 * Debian's Chromium. A real pi session and a real Claude Code transcript (../shared/corpus) are
 * imported through the extension, and each step a user takes is checked in the page and kept as a
 * screenshot (packages/vscode/test-results/editor/, `.ci-results/editor/` in CI):
 *
 *  1. the Sessions view lists both, and a session another process writes (the CLI) appears by itself;
 *  2. the Session Tree shows the Claude Code session's compaction with its retention line;
 *  3. "Compact Now" on the pi session reports the summary, who wrote it, tokens and retention,
 *     and the tree shows the new compaction;
 *  4. "Show What the Model Sees" opens the context with its token count, the status bar shows the usage;
 *  5. navigating with a branch summary makes a branch, and the context follows; navigating back to
 *     the other branch with a summary changes it again.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { codeServerFolders, installExtension, startCodeServer, type RunningCodeServer } from "./support/code-server.js";
import { launchChromium, Workbench } from "./support/workbench.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const CORPUS = join(ROOT, "..", "shared", "corpus");
const PI_SESSION = join(CORPUS, "pi-large-session.jsonl");
const CLAUDE_CODE_SESSION = join(CORPUS, "cc-258c7280-ae70-4798-800f-63464d01a85d.jsonl");
/** Imported by another process (the CLI) while the editor watches. */
const OTHER_SESSION = join(CORPUS, "cc-ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl");
const DAEMON_BIN = join(ROOT, "packages", "daemon", "bin", "base-context.js");
const ARTEFACTS = process.env.CI ? join(ROOT, ".ci-results", "editor") : join(ROOT, "packages", "vscode", "test-results", "editor");

let base: string;
let home: string;
let workspace: string;
let server: RunningCodeServer;
let chrome: Awaited<ReturnType<typeof launchChromium>>;
let wb: Workbench;

beforeAll(async () => {
  for (const file of [PI_SESSION, CLAUDE_CODE_SESSION, OTHER_SESSION]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: the editor test imports the real sessions of ../shared/corpus`);
  }
  rmSync(ARTEFACTS, { recursive: true, force: true });
  base = mkdtempSync(join(tmpdir(), "bc-editor-"));
  home = join(base, "base-context-home");
  workspace = join(base, "workspace");
  mkdirSync(home);
  mkdirSync(workspace);
  const folders = codeServerFolders(base, {
    "workbench.startupEditor": "none",
    "workbench.colorTheme": "Default Dark Modern",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.tips.enabled": false,
    "chat.disableAIFeatures": true,
    "telemetry.telemetryLevel": "off",
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "extensions.ignoreRecommendations": true,
    "update.mode": "none",
    "git.enabled": false,
    "editor.minimap.enabled": false,
    "files.simpleDialog.enable": true,
    // The daemon the extension starts: this clone's, on the tests' Node, in a home of its own.
    "baseContext.daemon.command": process.execPath,
    "baseContext.daemon.args": [DAEMON_BIN],
    "baseContext.daemon.env": { BASE_CONTEXT_HOME: home, OPENAI_API_KEY: "" },
  });
  const entry = inject("codeServerEntry");
  installExtension(entry, folders, inject("vsix"));
  server = await startCodeServer(entry, folders, workspace, {});
  chrome = await launchChromium(join(base, "chromium"));
  wb = new Workbench(chrome.page, ARTEFACTS);
  await wb.open(server.url, workspace);
  await wb.showBaseContext();
  await widenSideBar();
});

// What the page showed when a step failed, beside the steps' own screenshots.
afterEach(async ({ task }) => {
  if (task.result?.state !== "fail" || !wb) return;
  await wb.screenshot(`failed-${task.name.slice(0, 40).replace(/\W+/g, "-")}`).catch(() => undefined);
  console.log(`the extension's log (its Output channel):\n${extensionLog().slice(-6000)}`);
});

/** What the extension wrote to its "Base Context" Output channel (the daemon's log and its own lines). */
function extensionLog(): string {
  const logs = join(base, "user-data", "logs");
  if (!existsSync(logs)) return "(no logs)";
  const files = readdirSync(logs, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith("Base Context.log"));
  return files.map((name) => readFileSync(join(logs, name), "utf8")).join("\n") || "(no Base Context log)";
}

afterAll(async () => {
  await chrome?.close();
  await server?.stop();
  if (base) rmSync(base, { recursive: true, force: true });
});

/** Room for the rows' descriptions (the retention lines) in the screenshots: the side bar's edge dragged right. */
async function widenSideBar(): Promise<void> {
  const sideBar = await chrome.page.locator(".part.sidebar").boundingBox();
  if (!sideBar) return;
  const x = sideBar.x + sideBar.width;
  const y = sideBar.y + sideBar.height / 3;
  await chrome.page.mouse.move(x, y);
  await chrome.page.mouse.down();
  await chrome.page.mouse.move(x + 320, y, { steps: 8 });
  await chrome.page.mouse.up();
}

/** Opens a session from the Sessions view and waits until its tree shows where it is (its current leaf). */
async function openSession(row: RegExp, leaf: RegExp): Promise<void> {
  await wb.clickRow("Sessions", row);
  await wb.waitForRow("Session Tree", leaf);
}

async function importThroughTheDialog(path: string): Promise<void> {
  await wb.runCommand("Base Context: Import Session File…");
  await wb.waitForQuickInput(/Import session files/);
  await wb.chooseFile(path);
}

/** The facts of the context document: its leaf, messages and tokens. */
function contextFacts(text: string): { leaf: string; messages: number; tokens: number } {
  const leaf = /- leaf: `(\w+)` \(the current leaf\)/.exec(text);
  const size = /- ([\d,]+) messages?, ([\d,]+) tokens? \(each message's stored count\)/.exec(text);
  if (!leaf || !size) throw new Error(`no facts in the context document:\n${text.slice(0, 1500)}`);
  return { leaf: leaf[1]!, messages: Number(size[1]!.replace(/,/g, "")), tokens: Number(size[2]!.replace(/,/g, "")) };
}

/** The context document once it shows a current leaf other than `not` (and matching `also`). */
async function contextAtAnotherLeaf(not: string, also = ""): Promise<string> {
  return wb.waitForEditorText(new RegExp(`- leaf: \`(?!${not}\`)\\w+\` \\(the current leaf\\)${also}`));
}

describe("the Base Context extension in VS Code (code-server, Chromium)", () => {
  it("lists imported sessions, and one another process writes without a reload", async () => {
    await importThroughTheDialog(PI_SESSION);
    await wb.waitForNotification(/Imported pi-large-session\.jsonl: 1,018 entries, pi-jsonl/);
    await importThroughTheDialog(CLAUDE_CODE_SESSION);
    await wb.waitForNotification(/Imported cc-258c7280[^:]*: 497 entries, claude-code-jsonl/);
    await wb.waitForRow("Sessions", /^session \/mode, pi-mono, 1,018 entries/);
    await wb.waitForRow("Sessions", /^session Implement spotter-gqc, spotter-gqc, 497 entries/);
    await wb.screenshot("sessions-imported");

    // Another client: the command line, in a process of its own, on the same store.
    execFileSync(process.execPath, [DAEMON_BIN, "import", OTHER_SESSION], { env: { ...process.env, BASE_CONTEXT_HOME: home }, stdio: "ignore" });
    await wb.waitForRow("Sessions", /^session Work on bead spotter-4te.*660 entries/, 30_000);
    await wb.screenshot("sessions-written-by-another-process");
  });

  it("shows a Claude Code compaction in the session tree with its retention line", async () => {
    await openSession(/^session Implement spotter-gqc/, /^plugin data \S+: claude-code\.system\. .*current leaf/);
    await wb.runCommand("Base Context: Filter Session Tree…");
    await wb.pick("compactions", /Only compactions and summaries/);
    const row = await wb.waitForRow("Session Tree", /^compaction .*replaced 328 entries, Claude Code's summary kept \d+\/\d+ files, \d+\/\d+ errors/);
    expect(row).toMatch(/requests/);
    await wb.screenshot("claude-code-compaction");
    await wb.runCommand("Base Context: Filter Session Tree…");
    await wb.pick("all", /All entries/);
  });

  it("compacts the pi session now: the summary, who wrote it, the tokens and the retention line", async () => {
    await openSession(/^session \/mode/, /^assistant \w+: Oh wait, these errors look like we have API mismatches.*current leaf/);
    await wb.waitForStatus(/\d+(\.\d)?k\/200k · \d+%/);
    await wb.runCommand("Base Context: Compact Now…");
    await wb.answer(/Instructions for the summary/, "");
    await wb.waitForQuickInput(/How to compact/);
    await wb.pick("Summarize", /summarize the old part/);
    const text = await wb.waitForNotification(/Compacted "\/mode"/);
    expect(text).toMatch(/[\d,]+ → [\d,]+ tokens/);
    expect(text).toMatch(/summary by the built-in extractive summarizer/);
    expect(text).toMatch(/kept \d+\/\d+ files, \d+\/\d+ errors/);
    const [before, after] = /([\d,]+) → ([\d,]+) tokens/.exec(text)!.slice(1).map((n) => Number(n!.replace(/,/g, "")));
    expect(after).toBeLessThan(before!);
    // The new compaction is the current leaf, shown with what its summary kept.
    await wb.waitForRow("Session Tree", /^compaction .*current leaf.*replaced \d+ entries.*kept \d+\/\d+ files/);
    await wb.screenshot("compacted");
  });

  it("shows what the model sees, with token counts, and the usage in the status bar", async () => {
    await wb.clearNotifications();
    await wb.runCommand("Base Context: Show What the Model Sees");
    const text = await wb.waitForEditorText(/What the model sees: \/mode[\s\S]*- leaf: `\w+` \(the current leaf\)/);
    const facts = contextFacts(text);
    expect(text).toMatch(/- holds 1 compaction summary\n/);
    expect(facts.messages).toBeGreaterThan(1);
    const status = await wb.waitForStatus(/\d+(\.\d)?k\/200k · \d+%/);
    expect(status).toMatch(/k\/200k/);
    await wb.screenshot("what-the-model-sees");
  });

  it("navigates with a branch summary: a branch in the tree, and the context follows", async () => {
    const first = contextFacts(await wb.editorText());
    await wb.runCommand("Base Context: Navigate Here with a Branch Summary…");
    await wb.pick("convert all the 256-color indices", /Let me convert all the 256-color indices to hex RGB/);
    await wb.answer(/Instructions for the branch summary/, "");
    await wb.waitForNotification(/"\/mode" is now at \w+\. The branch left was summarized/);
    // The context follows the session: another leaf, the path up to the entry gone back to, and the summary.
    const second = contextFacts(await contextAtAnotherLeaf(first.leaf, "[\\s\\S]*- holds 1 branch summary"));
    expect(second.leaf).not.toBe(first.leaf);
    expect(second.messages).not.toBe(first.messages);
    await wb.waitForRow("Session Tree", /^branch 2 of 2, .*current branch/);
    await wb.waitForRow("Session Tree", new RegExp(`^branch summary ${second.leaf}: .*current leaf`));
    await wb.screenshot("navigated-with-a-branch-summary");

    // Back to the other branch's end (the compaction), summarizing the branch left: the context changes again.
    await wb.clearNotifications();
    await wb.runCommand("Base Context: Navigate Here with a Branch Summary…");
    await wb.pick("compaction", /compaction · /);
    await wb.answer(/Instructions for the branch summary/, "");
    await wb.waitForNotification(/"\/mode" is now at \w+\. The branch left was summarized/);
    const back = contextFacts(await contextAtAnotherLeaf(second.leaf, "[\\s\\S]*- holds 1 compaction summary and 1 branch summary"));
    expect(back.messages).not.toBe(second.messages);
    await wb.waitForRow("Session Tree", new RegExp(`^branch summary ${back.leaf}: .*current leaf`));
    await wb.waitForStatus(/\d+(\.\d)?k\/200k · \d+%/);
    await wb.screenshot("navigated-back-to-the-other-branch");
  });
});
