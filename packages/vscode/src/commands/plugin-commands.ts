/** The Plugins view's commands: refresh, reload one plugin, trust or stop trusting this project's plugins. */
import * as vscode from "vscode";
import { PluginsReload, ProjectTrust } from "@base-context/protocol";
import type { ExtensionState } from "../state.js";
import type { PluginsView } from "../views/plugins-view.js";
import { registerCommand } from "./run-command.js";

export function registerPluginCommands(state: ExtensionState, plugins: PluginsView, projectDir: string | undefined): vscode.Disposable[] {
  const command = (id: string, title: string, run: (...args: unknown[]) => unknown) => registerCommand(state.log, id, title, run);
  const trust = async (trusted: boolean) => {
    if (projectDir === undefined) throw new Error("open a folder first: trust is given to a project folder");
    if (trusted) {
      const answer = await vscode.window.showWarningMessage(
        `Let the plugins of ${projectDir} run?`,
        {
          modal: true,
          detail:
            "A project's plugins (its .base-context/plugins/) run inside the Base Context daemon as you, with your files and network. " +
            "Trust only a project whose plugins you have read. The trust is kept in your global Base Context folder, never in the project.",
        },
        "Trust",
      );
      if (answer !== "Trust") return;
    }
    const daemon = await state.daemon.ready();
    await daemon.request(ProjectTrust, { projectDir, trusted });
    await plugins.reload(daemon);
    void vscode.window.showInformationMessage(`Base Context: ${trusted ? "the plugins of this project may run" : "this project's plugins no longer run"}.`);
  };
  return [
    command("baseContext.refreshPlugins", "Refresh Plugins", () => plugins.reload()),
    command("baseContext.reloadPlugin", "Reload Plugin", async (item) => {
      const daemon = await state.daemon.ready();
      const id = plugins.pluginOf(item);
      await daemon.request(PluginsReload, id !== undefined ? { id } : {});
      await plugins.reload(daemon);
    }),
    command("baseContext.trustProject", "Trust This Project's Plugins", () => trust(true)),
    command("baseContext.untrustProject", "Stop Trusting This Project's Plugins", () => trust(false)),
  ];
}
