/**
 * The `plugins` / `plugin` commands as a user runs them (the built CLI, its own process, a
 * temporary BASE_CONTEXT_HOME), and plugins applying to the one-shot `compact` and `navigate`
 * commands, which must still exit promptly (no worker left running).
 */
import { ProjectTrust } from "@base-context/protocol";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  compact,
  compactableSession,
  hookPlugin,
  pluginInfo,
  pluginsRoot,
  projectPluginsRoot,
  replaceSummary,
  usePluginDaemons,
  writePlugin,
} from "./support/plugins.js";
import { runCli } from "./support/run-cli.js";
import { waitFor } from "./support/wait.js";

const SAMPLE = fileURLToPath(new URL("../examples/sessions/refactor-auth.jsonl", import.meta.url));
const daemons = usePluginDaemons();
const { dirs } = daemons;

/** Plugin commands load plugins in worker threads: slow on a loaded machine, so a generous limit. */
const CLI_TIMEOUT_MS = 60_000;
const cli = (args: string[], home: string, cwd?: string) =>
  runCli(args, { home, timeoutMs: CLI_TIMEOUT_MS, ...(cwd !== undefined ? { cwd } : {}) });

interface ListedPlugin {
  id: string;
  name: string;
  status: string;
  source: string;
}
const listed = (stdout: string): ListedPlugin[] => (JSON.parse(stdout) as { plugins: ListedPlugin[] }).plugins;

describe("plugin new", () => {
  it("creates a TypeScript plugin in the global plugins folder that loads as is, and says what to do next", async () => {
    const home = dirs.make("bc-plugins-cli-home-");

    const created = await cli(["plugin", "new", "my-summarizer"], home);

    expect(created.code).toBe(0);
    expect(created.stdout).toContain("Next steps:");
    const dir = join(pluginsRoot(home), "my-summarizer");
    expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))).toMatchObject({ baseContext: { apiVersion: 1, main: "index.ts" } });
    const list = await cli(["plugins", "--json"], home, home);
    expect(list.code).toBe(0);
    expect(listed(list.stdout)).toEqual([expect.objectContaining({ id: "global:my-summarizer", status: "active", source: "global" })]);
    const text = await cli(["plugins", "list"], home, home);
    expect(text.stdout).toMatch(/my-summarizer\s+global\s+active\s+trusted\s+worker\s+0\.1\.0\s+compact/);
  });

  it("writes JavaScript with --js and into --dir, refuses a bad name (2) and an existing folder (1)", async () => {
    const home = dirs.make("bc-plugins-cli-home-");
    const project = dirs.make("bc-plugins-cli-project-");

    const js = await cli(["plugin", "new", "team-rules", "--js", "--dir", projectPluginsRoot(project)], home);
    expect(js.code).toBe(0);
    expect(existsSync(join(projectPluginsRoot(project), "team-rules", "index.js"))).toBe(true);
    expect(js.stdout).toContain("base-context plugins trust");

    expect((await cli(["plugin", "new", "Bad Name"], home)).code).toBe(2);
    expect((await cli(["plugin", "new", "x", "--ts", "--js"], home)).code).toBe(2);
    const again = await cli(["plugin", "new", "team-rules", "--dir", projectPluginsRoot(project)], home);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists");
  });
});

describe("plugins", () => {
  it("has --help for itself and each command, and exits 2 on usage errors", async () => {
    const home = dirs.make("bc-plugins-cli-home-");
    for (const args of [
      ["plugins", "--help"],
      ["plugins", "list", "--help"],
      ["plugins", "trust", "--help"],
      ["plugins", "untrust", "--help"],
      ["plugins", "reload", "--help"],
      ["plugin", "new", "--help"],
    ]) {
      const help = await cli(args, home);
      expect(help.code, args.join(" ")).toBe(0);
      expect(help.stdout, args.join(" ")).toMatch(/^Usage: base-context plugins?/);
    }
    expect((await cli(["plugins", "frobnicate"], home)).code).toBe(2);
    expect((await cli(["plugins", "trust"], home)).code).toBe(2);
    expect((await cli(["plugins", "list", "--bogus"], home)).code).toBe(2);
    expect((await cli(["plugins", "trust", join(home, "no-such-project")], home)).code).toBe(1);
    expect((await cli(["plugins", "reload", "no-such-plugin"], home)).code).toBe(1);
  });

  it("trusts and untrusts a project: its plugins go from untrusted to active and back", async () => {
    const home = dirs.make("bc-plugins-cli-home-");
    const project = dirs.make("bc-plugins-cli-project-");
    writePlugin(projectPluginsRoot(project), "repo-plugin", hookPlugin({ compact: "return undefined;" }), { version: "2.3.1" });

    const before = await cli(["plugins", "--project", project], home);
    // Listed with the version its package.json gives (read, never run), not a placeholder.
    expect(before.stdout).toMatch(/repo-plugin\s+project\s+untrusted\s+not trusted\s+worker\s+2\.3\.1\s/);
    expect(before.stdout).not.toContain("0.0.0");
    expect(before.stdout).toContain("base-context plugins trust");

    const trusted = await cli(["plugins", "trust", project], home);
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toMatch(/repo-plugin\s+project\s+active/);
    expect(listed((await cli(["plugins", "--json"], home, project)).stdout)).toEqual([
      expect.objectContaining({ name: "repo-plugin", status: "active" }),
    ]);

    expect((await cli(["plugins", "untrust", project], home)).code).toBe(0);
    expect(listed((await cli(["plugins", "list", "--json", "--project", project], home)).stdout)[0]?.status).toBe("untrusted");
  });

  it("reaches a daemon that is already running: trust starts the project's plugins there, reload loads a new generation", async () => {
    const { client, home, project } = await daemons.start({ plugins: { global: hookPlugin({ compact: "return undefined;" }) } });
    writePlugin(projectPluginsRoot(project), "repo-plugin", hookPlugin({ compact: replaceSummary("from the repo plugin") }));
    const first = await compactableSession(client, project);
    expect((await compact(client, first.sessionId)).summarizer).toBe("extractive");
    expect((await pluginInfo(client, "repo-plugin", project))?.status).toBe("untrusted");

    expect((await cli(["plugins", "trust", project], home)).code).toBe(0);
    await waitFor(async () => (await pluginInfo(client, "repo-plugin", project))?.status === "active", {
      timeoutMs: 20_000,
      message: "the daemon to start the trusted plugin",
    });
    const second = await compactableSession(client, project);
    expect((await compact(client, second.sessionId)).compaction?.summary).toBe("from the repo plugin");

    const generation = (await pluginInfo(client, "global"))!.generation;
    const reloaded = await cli(["plugins", "reload", "global"], home);
    expect(reloaded.code).toBe(0);
    await waitFor(async () => ((await pluginInfo(client, "global"))?.generation ?? 0) > generation, {
      timeoutMs: 20_000,
      message: "a new generation in the daemon",
    });

    // The daemon's own project/trust and the CLI's write the same list.
    await client.request(ProjectTrust, { projectDir: project, trusted: false });
    expect(
      listed((await cli(["plugins", "--json", "--project", project], home)).stdout).find((p) => p.name === "repo-plugin")?.status,
    ).toBe("untrusted");
  });
});

describe("one-shot commands run plugins too", () => {
  it("compact and navigate use the plugins' summaries and exit on their own", async () => {
    const home = dirs.make("bc-plugins-cli-home-");
    writePlugin(
      pluginsRoot(home),
      "cli-plugin",
      hookPlugin({ compact: replaceSummary("compacted by the plugin"), tree: 'return { summary: { summary: "branch by the plugin" } };' }),
    );

    const compacted = await cli(["compact", SAMPLE, "--keep-recent", "2000", "--json"], home);
    expect(compacted.code).toBe(0);
    const report = JSON.parse(compacted.stdout) as {
      sessionId: string;
      status: string;
      summarizer?: string;
      entry?: { summary?: string; fromHook?: boolean };
    };
    expect(report).toMatchObject({ status: "committed", summarizer: "plugin:global:cli-plugin", entry: { fromHook: true } });
    // Repair is on by default: what the one-line summary lost is appended after the plugin's text.
    expect(report.entry?.summary).toMatch(/^compacted by the plugin\n\n## Critical Context\n- User constraint: /);

    // The sample's first assistant answer: going back there leaves the rest of the session behind.
    const navigated = await cli(["navigate", report.sessionId, firstAssistantId(), "--summarize", "--json"], home);
    expect(navigated.code).toBe(0);
    const moved = JSON.parse(navigated.stdout) as { status: string; summaryEntry: { summary: string; fromHook: boolean } };
    expect(moved).toMatchObject({ status: "moved", summaryEntry: { fromHook: true } });
    expect(moved.summaryEntry.summary.startsWith("branch by the plugin")).toBe(true);
  });
});

function firstAssistantId(): string {
  for (const line of readFileSync(SAMPLE, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const entry = JSON.parse(line) as { type: string; id: string; message?: { role?: string } };
    if (entry.type === "message" && entry.message?.role === "assistant") return entry.id;
  }
  throw new Error("the sample session has no assistant message");
}
