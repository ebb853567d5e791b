/** Registering a command whose failure is shown to the user (with the daemon's hint) and logged. */
import * as vscode from "vscode";
import { errorCode, requestErrorText } from "../daemon/problems.js";

export function registerCommand(
  log: vscode.OutputChannel,
  id: string,
  title: string,
  run: (...args: unknown[]) => unknown,
): vscode.Disposable {
  return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
    try {
      return await run(...args);
    } catch (error) {
      if (errorCode(error) === "cancelled") return undefined;
      const text = requestErrorText(error);
      log.appendLine(`[extension] ${title} failed: ${text}`);
      const choice = await vscode.window.showErrorMessage(`Base Context: ${title} failed: ${text}`, "Show Log");
      if (choice === "Show Log") log.show(true);
      return undefined;
    }
  });
}
