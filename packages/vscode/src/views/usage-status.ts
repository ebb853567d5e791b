/**
 * The status-bar item: the shown session's usage against `baseContext.contextWindow`
 * (`context/usage`), updated when the session changes or the setting does. Click: what the model sees.
 */
import * as vscode from "vscode";
import { ContextUsage } from "@base-context/protocol";
import { usageStatus } from "../models/usage-model.js";
import { contextWindow } from "../settings.js";
import type { ExtensionState } from "../state.js";

export class UsageStatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("baseContext.usage", vscode.StatusBarAlignment.Left, 50);
  private readonly disposables: vscode.Disposable[] = [this.item];
  private updating = 0;

  constructor(private readonly state: ExtensionState) {
    this.item.name = "Base Context: context usage";
    this.item.command = "baseContext.showContext";
    this.disposables.push(
      state.onDidOpen(() => void this.update()),
      state.onDidChangeSession((id) => id === state.openSessionId && void this.update()),
    );
  }

  async update(): Promise<void> {
    const sessionId = this.state.openSessionId;
    const run = ++this.updating;
    if (sessionId === undefined) {
      this.item.hide();
      return;
    }
    try {
      const daemon = await this.state.daemon.ready();
      const window = contextWindow();
      const usage = await daemon.request(ContextUsage, { sessionId, contextWindow: window });
      if (run !== this.updating) return;
      const status = usageStatus(usage, window, this.state.title(sessionId));
      this.item.text = status.text;
      this.item.tooltip = new vscode.MarkdownString(status.tooltip);
      this.item.backgroundColor =
        status.severity === "error"
          ? new vscode.ThemeColor("statusBarItem.errorBackground")
          : status.severity === "warning"
            ? new vscode.ThemeColor("statusBarItem.warningBackground")
            : undefined;
      this.item.accessibilityInformation = { label: `Base Context usage: ${status.text.replace(/\$\([^)]*\)\s*/g, "")}` };
      this.item.show();
    } catch {
      if (run === this.updating) this.item.hide();
    }
  }

  dispose(): void {
    for (const disposable of this.disposables) disposable.dispose();
  }
}
