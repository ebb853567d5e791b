/**
 * The Plugins view: `plugins/list` for this window's project, replaced by each `plugins/didChange`
 * (a plugin saved and hot-reloaded shows its new generation as it happens); `plugins/didError`
 * is also shown as a warning.
 */
import * as vscode from "vscode";
import { PluginsDidChange, PluginsDidError, PluginsList, type BaseContextClient } from "@base-context/protocol";
import { pluginsView } from "../models/plugins-model.js";
import type { ViewItem } from "../models/view-item.js";
import type { ExtensionState } from "../state.js";
import { ModelTree } from "./model-tree.js";

export class PluginsView implements vscode.Disposable {
  readonly provider = new ModelTree();
  readonly view: vscode.TreeView<ViewItem>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly state: ExtensionState,
    private readonly projectDir: string | undefined,
  ) {
    this.view = vscode.window.createTreeView("baseContext.plugins", { treeDataProvider: this.provider });
    this.disposables.push(
      this.view,
      this.provider,
      state.daemon.onNotification(PluginsDidChange, (news) => this.show(news.plugins)),
      state.daemon.onNotification(PluginsDidError, (error) => {
        state.log.appendLine(`[extension] plugin ${error.pluginId} (generation ${error.generation}) failed: ${error.kind}: ${error.message}`);
        void vscode.window.showWarningMessage(
          `Base Context: plugin ${error.pluginId.replace(/^(global|project):/, "").replace(/@.*$/, "")} failed (${error.kind}` +
            `${error.hook ? ` in ${error.hook}` : ""}): ${error.message}. The daemon went on without it.`,
        );
        void this.reload();
      }),
    );
  }

  async reload(client?: BaseContextClient): Promise<void> {
    const daemon = client ?? (await this.state.daemon.ready());
    const { plugins } = await daemon.request(PluginsList, this.projectDir !== undefined ? { projectDir: this.projectDir } : {});
    this.show(plugins);
  }

  /** The plugin a command acts on: the row given, else the selected one. */
  pluginOf(argument: unknown): string | undefined {
    const item = (argument as ViewItem | undefined) ?? this.view.selection[0];
    return item?.id.startsWith("plugin:") ? item.id.slice("plugin:".length) : undefined;
  }

  private show(plugins: Parameters<typeof pluginsView>[0]): void {
    this.provider.set(pluginsView(plugins));
    this.view.description = plugins.length === 0 ? undefined : `${plugins.length}`;
  }

  dispose(): void {
    for (const disposable of this.disposables) disposable.dispose();
  }
}
