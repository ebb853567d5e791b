/**
 * A plugin that fails shows where people look: in `compact`'s footer next to the summarizer that
 * wrote the summary instead, and in `doctor` (not "active"), with where in its files it failed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hookPlugin, pluginsRoot, writePlugin } from "./support/plugins.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const dirs = tempDirs();
afterEach(dirs.cleanup);

const EXAMPLE = join(import.meta.dirname, "..", "examples", "sessions", "refactor-auth.jsonl");

function homeWith(plugins: Record<string, Record<string, string>>, settings: unknown = {}): string {
  const home = dirs.make();
  for (const [name, files] of Object.entries(plugins)) writePlugin(pluginsRoot(home), name, files);
  writeFileSync(join(home, "settings.json"), JSON.stringify(settings));
  return home;
}

const THROWS = hookPlugin({
  preamble: 'function explode() {\n  throw new TypeError("no summary today");\n}',
  compact: "explode();",
  tree: "explode();",
});

describe("a failing plugin", () => {
  it("is named in compact's footer with its stack location; the built-in summary is used", async () => {
    const home = homeWith({ boom: THROWS });
    const run = await runCli(["compact", EXAMPLE], { home });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /Summarizer\s+extractive \(plugin global:boom failed: TypeError: no summary today \(at index\.mjs:2:9\); built in, offline\)/,
    );
    // A home of its own: in this one the file's session is compacted already (compact reuses it).
    const fresh = homeWith({ boom: THROWS });
    const json = JSON.parse((await runCli(["compact", EXAMPLE, "--json"], { home: fresh })).stdout) as { pluginFailures: unknown[] };
    expect(json.pluginFailures).toEqual([
      { pluginId: "global:boom", kind: "exception", message: "TypeError: no summary today (at index.mjs:2:9)" },
    ]);
  });

  it("fails doctor's plugin check (not active), for a throw and for a hang", async () => {
    const home = homeWith(
      { boom: THROWS, stuck: hookPlugin({ compact: "await new Promise(() => {});" }), fine: hookPlugin({ compact: "return undefined;" }) },
      { plugins: { hookTimeoutMs: 300 } },
    );
    const run = await runCli(["doctor", "--offline", "--json"], { home, cwd: home });
    const report = JSON.parse(run.stdout) as { ok: boolean; checks: { name: string; status: string; summary: string; fixes: string[] }[] };
    const plugins = report.checks.find((check) => check.name === "plugins")!;
    expect(report.ok).toBe(false);
    expect(plugins.status).toBe("fail");
    expect(plugins.summary).toContain("boom@1.0.0 failed when tried");
    expect(plugins.summary).toContain("stuck@1.0.0 failed when tried");
    expect(plugins.summary).toContain("fine@1.0.0 active");
    expect(plugins.fixes.join("\n")).toContain("boom: exception in session_before_compact: TypeError: no summary today (at index.mjs:2:9)");
    expect(plugins.fixes.join("\n")).toMatch(/stuck: timeout in session_before_compact/);
  });
});
