/**
 * Project plugins (`<project>/.base-context/plugins/<name>/`) never run until the user trusts the
 * project (docs/design.md#trust): cloning a repository must not be enough to run its code. A session's
 * project is its cwd; global plugins run everywhere.
 */
import { PluginsDidChange, PluginsList, ProjectTrust } from "@base-context/protocol";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startDaemon } from "./support/daemon.js";
import {
  compact,
  compactableSession,
  COMPACT_EVERYTHING,
  hookPlugin,
  pluginsRoot,
  projectPluginsRoot,
  replaceSummary,
  usePluginDaemons,
  writePlugin,
} from "./support/plugins.js";
import { waitFor } from "./support/wait.js";

const daemons = usePluginDaemons();
const { dirs } = daemons;

describe("a project's plugins", () => {
  it("are listed as untrusted and never run (not even loaded) until project/trust, and stop again when trust is withdrawn", async () => {
    const { client, project } = await daemons.start();
    const loaded = join(dirs.make("bc-plugins-marker-"), "loaded");
    writePlugin(
      projectPluginsRoot(project),
      "repo-summarizer",
      hookPlugin({
        preamble: `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(loaded)}, "top-level code ran");`,
        compact: replaceSummary("from the project's plugin"),
      }),
    );
    const projectDir = realpathSync(project);
    const { sessionId } = await compactableSession(client, project);

    const listed = await client.request(PluginsList, { projectDir: project });
    expect(listed.plugins).toEqual([
      expect.objectContaining({
        id: `project:repo-summarizer@${projectDir}`,
        name: "repo-summarizer",
        source: "project",
        projectDir,
        status: "untrusted",
        hooks: [],
      }),
    ]);
    const untrusted = await compact(client, sessionId);
    expect(untrusted).toMatchObject({ status: "committed", summarizer: "extractive" });
    expect(existsSync(loaded)).toBe(false);

    const changes: string[] = [];
    const subscription = client.onNotification(PluginsDidChange, ({ plugins }) =>
      changes.push(plugins.map((p) => `${p.name}:${p.status}`).join(",")),
    );
    await client.request(ProjectTrust, { projectDir: project, trusted: true });
    const { plugins } = await client.request(PluginsList, { projectDir: project });
    expect(plugins[0]).toMatchObject({ status: "active", hooks: ["session_before_compact"] });
    await waitFor(() => changes.includes("repo-summarizer:active"), { message: "plugins/didChange with the plugin active" });
    subscription.dispose();

    const second = await compactableSession(client, project);
    const trusted = await compact(client, second.sessionId);
    expect(trusted).toMatchObject({ status: "committed", summarizer: `plugin:project:repo-summarizer@${projectDir}` });
    expect(trusted.compaction).toMatchObject({ summary: "from the project's plugin", fromHook: true });
    expect(readFileSync(loaded, "utf8")).toBe("top-level code ran");

    await client.request(ProjectTrust, { projectDir: project, trusted: false });
    expect((await client.request(PluginsList, { projectDir: project })).plugins[0]?.status).toBe("untrusted");
    const third = await compactableSession(client, project);
    expect((await compact(client, third.sessionId)).summarizer).toBe("extractive");
  });

  it("run only for sessions of their project; global plugins run for every project", async () => {
    const { client, project } = await daemons.start({ plugins: { everywhere: hookPlugin({ compact: "return undefined;" }) } });
    writePlugin(projectPluginsRoot(project), "local", hookPlugin({ compact: replaceSummary("only here") }));
    await client.request(ProjectTrust, { projectDir: project, trusted: true });
    const elsewhere = dirs.make("bc-plugins-other-project-");

    const inProject = await compactableSession(client, project);
    const outside = await compactableSession(client, elsewhere);

    expect((await compact(client, inProject.sessionId)).compaction?.summary).toBe("only here");
    expect((await compact(client, outside.sessionId)).summarizer).toBe("extractive");
    const { plugins } = await client.request(PluginsList, { projectDir: elsewhere });
    expect(plugins.map((plugin) => plugin.id)).toEqual(["global:everywhere"]);
  });

  it("treats a project whose .base-context is the global folder (the home folder) as having no plugins of its own", async () => {
    // The default layout: ~/.base-context is the global folder, and a session started in ~ has
    // ~/.base-context/plugins as its "project plugins" folder — the global plugins, once only.
    const user = dirs.make("bc-plugins-user-");
    const home = join(user, ".base-context");
    mkdirSync(home);
    writeFileSync(join(home, "settings.json"), JSON.stringify(COMPACT_EVERYTHING));
    writePlugin(pluginsRoot(home), "mine", hookPlugin({ compact: replaceSummary("from the global plugin") }));
    const { client } = daemons.closeAfterTest(await startDaemon({ home }));

    const { plugins } = await client.request(PluginsList, { projectDir: user });
    expect(plugins.map((plugin) => [plugin.id, plugin.status])).toEqual([["global:mine", "active"]]);
    const { sessionId } = await compactableSession(client, user);
    expect(await compact(client, sessionId)).toMatchObject({
      summarizer: "plugin:global:mine",
      compaction: { summary: "from the global plugin" },
    });
  });

  it("keeps the trust in the global folder, never in the project", async () => {
    const { client, home, project } = await daemons.start();
    await client.request(ProjectTrust, { projectDir: project, trusted: true });
    const trust = JSON.parse(readFileSync(join(home, "trust.json"), "utf8")) as { projects: Record<string, { trusted: boolean }> };
    expect(trust.projects[realpathSync(project)]?.trusted).toBe(true);
    expect(existsSync(join(project, ".base-context", "trust.json"))).toBe(false);
  });
});
