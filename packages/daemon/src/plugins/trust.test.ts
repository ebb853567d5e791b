import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PluginHost } from "./host.js";
import { compactEvent, pluginModule, settings, writePlugin } from "./test-support.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const disposers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

const cancelHook = `session_before_compact() { return { cancel: true }; }`;

async function setup() {
  const home = dirs.make("bc-home-");
  const project = dirs.make("bc-project-");
  disposers.push(() => dirs.remove(home), () => dirs.remove(project));
  writePlugin(join(project, ".base-context", "plugins"), "repo-guard", { "index.js": pluginModule(cancelHook) });
  const host = new PluginHost({ home, watch: false });
  disposers.push(() => host.dispose());
  await host.start();
  return { host, home, project };
}

describe("project plugins and trust", () => {
  it("lists a project's plugin as untrusted and never runs it before the project is trusted", async () => {
    const { host, project } = await setup();
    const run = await host.runCompactHook(compactEvent(), { settings: settings(), projectDir: project });
    expect(run.kind).toBe("none");
    const [info] = await host.list(project);
    expect(info).toMatchObject({ name: "repo-guard", source: "project", status: "untrusted", hooks: [] });
    expect(info!.id).toMatch(/^project:repo-guard@/);
  });

  it("runs it once trusted, stores trust in the global folder only, and stops it when trust is withdrawn", async () => {
    const { host, home, project } = await setup();
    await host.list(project);
    await host.setTrust(project, true);
    expect(host.isTrusted(project)).toBe(true);
    expect((await host.list(project))[0]!.status).toBe("active");
    expect((await host.runCompactHook(compactEvent(), { settings: settings(), projectDir: project })).kind).toBe("cancel");
    // Without the project, only global plugins run.
    expect((await host.runCompactHook(compactEvent(), { settings: settings() })).kind).toBe("none");

    const trustFile = JSON.parse(readFileSync(join(home, "trust.json"), "utf8")) as { projects: Record<string, { trusted: boolean }> };
    expect(Object.values(trustFile.projects)).toEqual([expect.objectContaining({ trusted: true })]);
    expect(existsSync(join(project, ".base-context", "trust.json"))).toBe(false);

    await host.setTrust(project, false);
    expect((await host.list(project))[0]!.status).toBe("untrusted");
    expect((await host.runCompactHook(compactEvent(), { settings: settings(), projectDir: project })).kind).toBe("none");
  });

  it("announces the change of status with plugins/didChange", async () => {
    const { host, project } = await setup();
    await host.list(project);
    const seen: string[][] = [];
    host.onDidChange((plugins) => seen.push(plugins.map((info) => `${info.name}:${info.status}`)));
    await host.setTrust(project, true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen.at(-1)).toEqual(["repo-guard:active"]);
  });

  it("remembers trust across daemons (a new host over the same home runs the plugin)", async () => {
    const { host, home, project } = await setup();
    await host.setTrust(project, true);
    await host.dispose();
    const next = new PluginHost({ home, watch: false });
    disposers.push(() => next.dispose());
    await next.start();
    expect((await next.runCompactHook(compactEvent(), { settings: settings(), projectDir: project })).kind).toBe("cancel");
  });

  it("runs global and trusted project plugins together, in order", async () => {
    const { host, home, project } = await setup();
    writePlugin(join(home, "plugins"), "global-summary", {
      "index.js": pluginModule(
        `session_before_compact() { return { compaction: { summary: "g", firstKeptEntryId: "u2", tokensBefore: 1 } }; }`,
      ),
    });
    await host.reload();
    await host.setTrust(project, true);
    const run = await host.runCompactHook(compactEvent(), { settings: settings(), projectDir: project });
    expect(run.kind === "cancel" && run.plugin.name).toBe("repo-guard");
    expect((await host.list(project)).map((info) => [info.source, info.name])).toEqual([
      ["global", "global-summary"],
      ["project", "repo-guard"],
    ]);
  });
});
