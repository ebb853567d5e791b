/**
 * The Sessions view's commands: open, search, rename, delete (asks first), import a file (any
 * format the daemon reads, detected), import all of an agent's sessions (the `base-context import
 * --all` command line), export.
 */
import { spawn } from "node:child_process";
import * as vscode from "vscode";
import { SessionDelete, SessionExport, SessionImport, SessionRename, type BaseContextClient } from "@base-context/protocol";
import { errorCode } from "../daemon/problems.js";
import { plural } from "../models/format.js";
import { importAllOutcome, parseImportAllReport } from "../models/import-model.js";
import { daemonSettings } from "../settings.js";
import type { ExtensionState } from "../state.js";
import type { SessionTreeView } from "../views/session-tree-view.js";
import type { SessionsView } from "../views/sessions-view.js";
import { registerCommand } from "./run-command.js";

export interface SessionCommandDeps {
  state: ExtensionState;
  sessions: SessionsView;
  tree: SessionTreeView;
}

export function registerSessionCommands(deps: SessionCommandDeps): vscode.Disposable[] {
  const { state, sessions } = deps;
  const command = (id: string, title: string, run: (...args: unknown[]) => unknown) => registerCommand(state.log, id, title, run);
  const need = (argument: unknown): string => {
    const sessionId = sessions.sessionOf(argument);
    if (sessionId === undefined) throw new Error("pick a session in the Sessions view first");
    return sessionId;
  };
  return [
    command("baseContext.openSession", "Open Session", (id, entryId) => openSession(deps, need(id), typeof entryId === "string" ? entryId : undefined)),
    command("baseContext.refreshSessions", "Refresh Sessions", () => sessions.reload()),
    command("baseContext.loadMoreSessions", "Load More Sessions", () => sessions.loadMore()),
    command("baseContext.searchSessions", "Search Sessions", async () => {
      const query = await vscode.window.showInputBox({
        title: "Search sessions",
        prompt: "Words to find in what the sessions say (every word must appear; tool output is not searched)",
        placeHolder: "refresh token",
      });
      if (query?.trim()) await sessions.searchFor(query.trim());
    }),
    command("baseContext.clearSearch", "Clear Search", () => sessions.clearSearch()),
    command("baseContext.renameSession", "Rename Session", (item) => rename(state, need(item))),
    command("baseContext.deleteSession", "Delete Session", (item) => remove(state, sessions, need(item))),
    command("baseContext.importFile", "Import Session File", (uri, uris) => importFiles(deps, filesOf(uri, uris))),
    command("baseContext.importAll", "Import All Sessions", () => importAll(state, sessions)),
    command("baseContext.exportSession", "Export Session", (item) => exportSession(state, need(item))),
  ];
}

async function openSession(deps: SessionCommandDeps, sessionId: string, entryId?: string): Promise<void> {
  deps.state.open(sessionId);
  await deps.tree.refresh();
  if (entryId === undefined) return;
  const item = deps.tree.provider.find(`${sessionId}/${entryId}`);
  if (item) await deps.tree.view.reveal(item, { select: true, focus: true, expand: true });
}

async function rename(state: ExtensionState, sessionId: string): Promise<void> {
  const current = state.summary(sessionId)?.name;
  const name = await vscode.window.showInputBox({
    title: "Rename session",
    value: current ?? "",
    prompt: "The session's name (stored in the session, so it survives export)",
    validateInput: (value) => (value.trim().length === 0 ? "A name cannot be empty." : value.length > 500 ? "At most 500 characters." : undefined),
  });
  if (name === undefined) return;
  const daemon = await state.daemon.ready();
  const { session } = await daemon.request(SessionRename, { sessionId, name: name.trim() });
  state.remember([session]);
  state.sessionChanged(sessionId);
}

async function remove(state: ExtensionState, sessions: SessionsView, sessionId: string): Promise<void> {
  const summary = state.summary(sessionId);
  const size = summary ? ` and its ${plural(summary.entryCount, "entry", "entries")}` : "";
  const answer = await vscode.window.showWarningMessage(
    `Delete the session "${state.title(sessionId)}"?`,
    { modal: true, detail: `The session${size} are removed from the store. This cannot be undone (export it first to keep a copy).` },
    "Delete",
  );
  if (answer !== "Delete") return;
  const daemon = await state.daemon.ready();
  await daemon.request(SessionDelete, { sessionId });
  state.sessionDeleted(sessionId);
  await sessions.reload(daemon);
}

/** The files a command was run on: the explorer's selection, a single file, or none (ask). */
function filesOf(uri: unknown, uris: unknown): vscode.Uri[] {
  if (Array.isArray(uris) && uris.every((u) => u instanceof vscode.Uri)) return uris;
  return uri instanceof vscode.Uri ? [uri] : [];
}

async function importFiles(deps: SessionCommandDeps, given: vscode.Uri[]): Promise<void> {
  const files =
    given.length > 0
      ? given
      : await vscode.window.showOpenDialog({
          title: "Import session files (pi, Claude Code or Codex: the format is detected)",
          canSelectMany: true,
          openLabel: "Import",
          filters: { "Session files": ["jsonl"], "All files": ["*"] },
        });
  if (!files || files.length === 0) return;
  const daemon = await deps.state.daemon.ready();
  const done: string[] = [];
  let lastId: string | undefined;
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: "Base Context: importing" }, async (progress) => {
    for (const file of files) {
      progress.report({ message: file.fsPath });
      const result = await importOne(daemon, file.fsPath);
      if (!result) continue;
      lastId = result.session.id;
      done.push(importedText(result, file.fsPath));
    }
  });
  if (lastId === undefined) return;
  await deps.sessions.reload(daemon);
  await openSession(deps, lastId);
  void vscode.window.showInformationMessage(`Base Context: ${done.join(" ")}`);
}

type ImportResult = Awaited<ReturnType<typeof importRequest>>;

function importRequest(daemon: BaseContextClient, path: string, newId = false) {
  return daemon.request(SessionImport, { path, ...(newId ? { newId } : {}) });
}

/** One import; a file whose session is already here (and cannot be brought up to date) is imported as a copy if the user says so. */
async function importOne(daemon: BaseContextClient, path: string): Promise<ImportResult | undefined> {
  try {
    return await importRequest(daemon, path);
  } catch (error) {
    if (errorCode(error) !== "session_exists") throw error;
    const answer = await vscode.window.showWarningMessage(
      `The session in ${path} is already in Base Context.`,
      { modal: true, detail: "Import it as a copy, under a new id?" },
      "Import a Copy",
    );
    return answer === "Import a Copy" ? importRequest(daemon, path, true) : undefined;
  }
}

function importedText(result: ImportResult, path: string): string {
  const name = path.split(/[\\/]/).pop();
  const skipped = result.skippedLines?.length ? ` (${plural(result.skippedLines.length, "unreadable line")} skipped)` : "";
  if (result.updated) return `Added ${plural(result.addedEntries ?? 0, "new entry", "new entries")} from ${name}${skipped}.`;
  return `Imported ${name}: ${plural(result.entryCount, "entry", "entries")}, ${result.format ?? "pi-jsonl"}${skipped}.`;
}

const AGENTS = [
  { agent: "claude-code", label: "Claude Code", detail: "every transcript under ~/.claude/projects ($CLAUDE_CONFIG_DIR)" },
  { agent: "codex", label: "Codex", detail: "every rollout under ~/.codex/sessions ($CODEX_HOME)" },
];

/**
 * `base-context import --all <agent>`, the command line's own import of every session an agent
 * keeps (new ones imported, known ones brought up to date). The list hears of each session
 * through `session/didChange` as it is written.
 */
async function importAll(state: ExtensionState, sessions: SessionsView): Promise<void> {
  const picked = await vscode.window.showQuickPick(
    AGENTS.map((agent) => ({ ...agent, description: "" })),
    { title: "Import all sessions of an agent", placeHolder: "Which agent's sessions? Known ones get only what is new." },
  );
  if (!picked) return;
  const settings = daemonSettings();
  const args = [...settings.args, "import", "--all", picked.agent, "--json"];
  const run = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Base Context: importing ${picked.label}'s sessions`, cancellable: true },
    (_progress, token) => runCli(settings.command, args, { ...process.env, ...settings.env }, token, state.log),
  );
  if (run === undefined) return;
  // A file that failed makes the command exit 1, with the report of all the others still written.
  const report = parseImportAllReport(run.stdout);
  if (!report) throw new Error(lastLines(run.stderr) || `${settings.command} exited with ${run.code}`);
  const outcome = importAllOutcome(picked.label, report);
  for (const failure of outcome.failures) state.log.appendLine(`[extension] ${failure}`);
  await sessions.reload();
  const text = `Base Context: ${outcome.message}`;
  void (outcome.level === "warning" ? vscode.window.showWarningMessage(text) : vscode.window.showInformationMessage(text));
}

/** Runs the command line: its exit code and output, or undefined when cancelled; throws when it cannot start. */
function runCli(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  token: vscode.CancellationToken,
  log: vscode.OutputChannel,
): Promise<{ code: number | null; stdout: string; stderr: string } | undefined> {
  return new Promise((resolve, reject) => {
    log.appendLine(`[extension] running ${[command, ...args].join(" ")}`);
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      log.append(chunk);
    });
    const cancel = token.onCancellationRequested(() => child.kill("SIGTERM"));
    child.once("error", (error) => {
      cancel.dispose();
      reject(new Error(`${command} could not be started: ${error.message}`));
    });
    child.once("close", (code) => {
      cancel.dispose();
      resolve(token.isCancellationRequested ? undefined : { code, stdout, stderr });
    });
  });
}

function lastLines(text: string): string {
  return text.split("\n").map((line) => line.trim()).filter(Boolean).slice(-2).join(" ");
}

async function exportSession(state: ExtensionState, sessionId: string): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const fileName = `${state.title(sessionId).replace(/[\\/:*?"<>|]+/g, " ").trim().slice(0, 60) || sessionId}.jsonl`;
  const target = await vscode.window.showSaveDialog({
    title: "Export the session as a pi session file (JSONL)",
    saveLabel: "Export",
    filters: { "pi session files": ["jsonl"] },
    ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, fileName) } : {}),
  });
  if (!target) return;
  const daemon = await state.daemon.ready();
  const result = await daemon.request(SessionExport, { sessionId, format: "pi-jsonl", path: target.fsPath });
  const text = `Base Context: exported "${state.title(sessionId)}" to ${target.fsPath}.${result.warning ? ` ${result.warning}` : ""}`;
  const open = await (result.warning ? vscode.window.showWarningMessage(text, "Open File") : vscode.window.showInformationMessage(text, "Open File"));
  if (open === "Open File") await vscode.window.showTextDocument(target);
}
