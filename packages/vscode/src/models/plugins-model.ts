/**
 * The Plugins view: each installed plugin with its state (active, error, disabled, untrusted),
 * where it comes from, its version and generation (a hot reload serves a new one), and its last
 * error; project plugins that may not run say how to trust the project.
 */
import type { PluginInfo } from "@base-context/protocol";
import { escapeMarkdown, oneLine } from "./format.js";
import type { ViewItem } from "./view-item.js";

const STATE_ICONS: Record<PluginInfo["status"], { id: string; color?: string }> = {
  active: { id: "pass-filled", color: "charts.green" },
  error: { id: "error", color: "charts.red" },
  disabled: { id: "circle-slash", color: "charts.yellow" },
  untrusted: { id: "workspace-untrusted", color: "charts.yellow" },
};

export function pluginsView(plugins: readonly PluginInfo[]): ViewItem[] {
  return [...plugins]
    .sort((a, b) => (a.source === b.source ? a.name.localeCompare(b.name) : a.source === "project" ? -1 : 1))
    .map(pluginItem);
}

function pluginItem(plugin: PluginInfo): ViewItem {
  const parts: string[] = [plugin.status, plugin.source === "project" ? "this project" : "global", `v${plugin.version}`];
  if (plugin.generation > 1) parts.push(`reloaded ×${plugin.generation - 1}`);
  if (plugin.lastError) parts.push(`${plugin.lastError.kind}: ${oneLine(plugin.lastError.message, 80)}`);
  return {
    id: `plugin:${plugin.id}`,
    label: plugin.name,
    description: parts.join(" · "),
    tooltip: pluginTooltip(plugin),
    icon: STATE_ICONS[plugin.status],
    contextValue: `plugin.${plugin.status}`,
    collapsible: "none",
    accessibilityLabel: `plugin ${plugin.name}, ${parts.join(", ")}`,
  };
}

function pluginTooltip(plugin: PluginInfo): string {
  const lines = [
    `**${escapeMarkdown(plugin.name)}** ${plugin.version} · ${plugin.status}`,
    "",
    `- from: ${plugin.source === "project" ? `the project ${escapeMarkdown(plugin.projectDir ?? "")}` : "the global plugins folder"}`,
    `- folder: ${escapeMarkdown(plugin.path)}`,
    `- hooks: ${plugin.hooks.length > 0 ? plugin.hooks.join(", ") : "none"}`,
    `- generation ${plugin.generation}${plugin.loadedAt ? `, loaded ${plugin.loadedAt}` : ""} (each save of its files loads a new one)`,
    `- runs in: ${plugin.isolation === "process" ? "a child process of its own" : "a worker thread of the daemon"}`,
  ];
  if (plugin.status === "untrusted") lines.push("", "This project's plugins run once you trust the project: *Trust This Project's Plugins*.");
  if (plugin.status === "disabled") lines.push("", "Disabled after repeated crashes: *Reload Plugin* (or save one of its files) enables it again.");
  if (plugin.lastError) {
    const hook = plugin.lastError.hook ? ` in ${plugin.lastError.hook}` : "";
    lines.push("", `Last error (${plugin.lastError.kind}${hook}, ${plugin.lastError.at}):`, "", `    ${plugin.lastError.message.split("\n").join("\n    ")}`);
  }
  return lines.join("\n");
}
