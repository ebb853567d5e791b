/** The extension's settings (contributed in package.json with their descriptions), read when used. */
import * as vscode from "vscode";
import type { DaemonSettings } from "./daemon/daemon-connection.js";

export type CompactionStrategySetting = "ask" | "auto" | "summarize" | "prune";

const SECTION = "baseContext";

export function daemonSettings(): DaemonSettings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return {
    command: config.get<string>("daemon.command", "base-context").trim() || "base-context",
    args: config.get<string[]>("daemon.args", []),
    socket: config.get<string>("daemon.socket", "").trim(),
    env: config.get<Record<string, string>>("daemon.env", {}),
  };
}

export function contextWindow(): number {
  const value = vscode.workspace.getConfiguration(SECTION).get<number>("contextWindow", 200_000);
  return Number.isInteger(value) && value > 0 ? value : 200_000;
}

export function compactionStrategy(): CompactionStrategySetting {
  return vscode.workspace.getConfiguration(SECTION).get<CompactionStrategySetting>("compaction.strategy", "ask");
}

/** Whether a configuration change touches how the daemon is started (it is started again then). */
export function affectsDaemon(event: vscode.ConfigurationChangeEvent): boolean {
  return event.affectsConfiguration(`${SECTION}.daemon`);
}

export function affectsUsage(event: vscode.ConfigurationChangeEvent): boolean {
  return event.affectsConfiguration(`${SECTION}.contextWindow`);
}

export function openSettings(): Thenable<unknown> {
  return vscode.commands.executeCommand("workbench.action.openSettings", `@ext:base-context.base-context`);
}
