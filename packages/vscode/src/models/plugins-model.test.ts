import type { PluginInfo } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { pluginsView } from "./plugins-model.js";

const plugin = (name: string, extra: Partial<PluginInfo>): PluginInfo => ({
  id: `global:${name}`,
  name,
  version: "1.0.0",
  generation: 1,
  source: "global",
  path: `/home/me/.base-context/plugins/${name}`,
  status: "active",
  hooks: ["session_before_compact"],
  trusted: true,
  isolation: "worker",
  ...extra,
});

describe("pluginsView", () => {
  const items = pluginsView([
    plugin("zeta", {}),
    plugin("keeper", { generation: 3, status: "error", lastError: { kind: "exception", message: "boom (at index.ts:3:9)", hook: "session_before_compact", at: "2026-03-01T10:00:00.000Z" } }),
    plugin("local", { id: "project:local@/p", source: "project", projectDir: "/p", status: "untrusted", trusted: false }),
  ]);

  it("lists the project's plugins first, then the global ones by name, with state, source, version and reloads", () => {
    expect(items.map((item) => [item.label, item.description])).toEqual([
      ["local", "untrusted · this project · v1.0.0"],
      ["keeper", "error · global · v1.0.0 · reloaded ×2 · exception: boom (at index.ts:3:9)"],
      ["zeta", "active · global · v1.0.0"],
    ]);
    expect(items.map((item) => item.contextValue)).toEqual(["plugin.untrusted", "plugin.error", "plugin.active"]);
    expect(items[2]!.icon).toEqual({ id: "pass-filled", color: "charts.green" });
  });

  it("explains in the tooltip how to trust a project, and shows the last error with its hook", () => {
    expect(items[0]!.tooltip).toContain("This project's plugins run once you trust the project");
    expect(items[1]!.tooltip).toContain("Last error (exception in session_before_compact, 2026-03-01T10:00:00.000Z):");
    expect(items[1]!.tooltip).toContain("    boom (at index.ts:3:9)");
  });
});
