/**
 * The Base Context extension: one daemon per window (daemon/daemon-connection.ts), and the views
 * over it — Sessions, Session Tree, Plugins, "what the model sees" documents, the usage in the
 * status bar — with their commands, all under the "Base Context" category.
 */
import * as vscode from "vscode";
import type { BaseContextClient } from "@base-context/protocol";
import { registerCompactCommand } from "./commands/compact-command.js";
import { registerPluginCommands } from "./commands/plugin-commands.js";
import { registerCommand } from "./commands/run-command.js";
import { registerSessionCommands } from "./commands/session-commands.js";
import { registerTreeCommands } from "./commands/tree-commands.js";
import { DaemonConnection, type DaemonState } from "./daemon/daemon-connection.js";
import type { Problem, ProblemAction } from "./daemon/problems.js";
import { affectsDaemon, affectsUsage, daemonSettings, openSettings } from "./settings.js";
import { ExtensionState } from "./state.js";
import { ContextDocuments } from "./views/context-documents.js";
import { PluginsView } from "./views/plugins-view.js";
import { SessionTreeView } from "./views/session-tree-view.js";
import { SessionsView, workspaceFolders } from "./views/sessions-view.js";
import { UsageStatusItem } from "./views/usage-status.js";

const ACTION_LABELS: Record<ProblemAction, string> = { openSettings: "Open Settings", showLog: "Show Log", restart: "Restart" };

/** This window's daemon, stopped (orderly) when the window closes or the extension is turned off. */
let running: DaemonConnection | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel("Base Context");
  const projectDir = workspaceFolders()[0];
  const version = (context.extension.packageJSON as { version?: string }).version ?? "0.0.0";
  let views: { sessions: SessionsView; plugins: PluginsView; usage: UsageStatusItem } | undefined;

  const daemon = new DaemonConnection({
    settings: daemonSettings,
    projectDir,
    clientInfo: { name: "vscode", version },
    log: (line) => log.appendLine(line),
    onProblem: (problem) => void showProblem(problem),
    onState: (state: DaemonState) => void vscode.commands.executeCommand("setContext", "baseContext.daemon", state),
    onReady: async (client: BaseContextClient) => {
      if (!views) return;
      await Promise.all([views.sessions.connected(client), views.plugins.reload(client), views.usage.update()]);
    },
  });
  running = daemon;
  const state = new ExtensionState(daemon, log);
  const sessions = new SessionsView(state);
  const tree = new SessionTreeView(state);
  const plugins = new PluginsView(state, projectDir);
  const usage = new UsageStatusItem(state);
  const contexts = new ContextDocuments(state);
  views = { sessions, plugins, usage };

  const showProblem = async (problem: Problem) => {
    const choice = await vscode.window.showErrorMessage(problem.message, ...problem.actions.map((action) => ACTION_LABELS[action]));
    if (choice === ACTION_LABELS.openSettings) await openSettings();
    if (choice === ACTION_LABELS.showLog) log.show(true);
    if (choice === ACTION_LABELS.restart) await daemon.restart();
  };

  context.subscriptions.push(
    log,
    state,
    sessions,
    tree,
    plugins,
    usage,
    contexts,
    ...registerSessionCommands({ state, sessions, tree }),
    ...registerTreeCommands({ state, tree, contexts }),
    ...registerPluginCommands(state, plugins, projectDir),
    registerCompactCommand(state, sessions, contexts),
    registerCommand(log, "baseContext.showContext", "Show What the Model Sees", async (item) => {
      const sessionId = sessions.sessionOf(item);
      if (sessionId === undefined) throw new Error("pick a session in the Sessions view first");
      await contexts.show(sessionId);
    }),
    registerCommand(log, "baseContext.showLog", "Show Daemon Log", () => log.show(true)),
    registerCommand(log, "baseContext.restartDaemon", "Restart Daemon", () => daemon.restart()),
    registerCommand(log, "baseContext.openSettings", "Open Settings", () => openSettings()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (affectsDaemon(event)) {
        log.appendLine("[extension] the daemon's settings changed: starting it again");
        void daemon.restart();
      } else if (affectsUsage(event)) {
        void usage.update();
      }
    }),
  );
  void vscode.commands.executeCommand("setContext", "baseContext.daemon", "starting");
  daemon.start();
}

export function deactivate(): Promise<void> | undefined {
  const daemon = running;
  running = undefined;
  return daemon?.stop();
}
