import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import { waitFor } from "../../../../test/support/wait.js";
import { SettingsManager, type SettingsChangeEvent } from "./manager.js";

const dirs = tempDirs();
let home: string;
let project: string;
let manager: SettingsManager;
let events: SettingsChangeEvent[];

function writeJson(path: string, value: unknown): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value, null, 2));
}

const globalFile = () => join(home, "settings.json");
const projectFile = () => join(project, ".base-context", "settings.json");

beforeEach(() => {
  // The global folder does not exist yet: it is created by the tests that need it.
  home = join(dirs.make(), "home", ".base-context");
  project = dirs.make("base-context-project-");
  events = [];
});

afterEach(async () => {
  await manager?.dispose();
  dirs.cleanup();
});

function start(options: { watch?: boolean } = {}): SettingsManager {
  manager = new SettingsManager({ env: { BASE_CONTEXT_HOME: home }, debounceMs: 10, ...options });
  manager.onDidChange((event) => events.push(event));
  return manager;
}

describe("SettingsManager", () => {
  it("returns the defaults when there are no files, from 'default', with no errors", () => {
    const { settings, sources, errors } = start({ watch: false }).get(project);
    expect(settings.compaction).toEqual({
      enabled: true,
      reserveTokens: 16384,
      keepRecentTokens: 20000,
      prune: { enabled: true, protectTokens: 40000, minTokens: 1000, minSavings: 20000 },
    });
    expect(settings.summarizer.provider).toBe("auto");
    expect(errors).toEqual([]);
    expect(new Set(Object.values(sources))).toEqual(new Set(["default"]));
  });

  it("reads the global file from BASE_CONTEXT_HOME and the project file, project winning per key", () => {
    writeJson(globalFile(), { compaction: { enabled: false, keepRecentTokens: 10000 }, summarizer: { baseURL: "http://127.0.0.1:9/v1" } });
    writeJson(projectFile(), { compaction: { keepRecentTokens: 5000 }, tokens: { estimator: "chars4" } });
    const m = start({ watch: false });

    const { settings, sources } = m.get(project);
    expect(settings.compaction).toEqual({
      enabled: false,
      reserveTokens: 16384,
      keepRecentTokens: 5000,
      prune: { enabled: true, protectTokens: 40000, minTokens: 1000, minSavings: 20000 },
    });
    expect(settings.tokens.estimator).toBe("chars4");
    expect(settings.summarizer.baseURL).toBe("http://127.0.0.1:9/v1");
    expect(sources["compaction.enabled"]).toBe("global");
    expect(sources["compaction.keepRecentTokens"]).toBe("project");
    expect(sources["compaction.reserveTokens"]).toBe("default");
    expect(sources["summarizer.baseURL"]).toBe("global");

    // Without a project, only the global file applies.
    expect(m.get().settings.compaction.keepRecentTokens).toBe(10000);
  });

  it("ignores an invalid JSON file whole and reports it with its path and position", () => {
    writeJson(globalFile(), { compaction: { reserveTokens: 1000 } });
    writeJson(projectFile(), '{\n  "compaction": { "enabled": false },\n  "context": { "mode": "off" ');
    const { settings, errors } = start({ watch: false }).get(project);

    expect(settings.compaction.enabled).toBe(true);
    expect(settings.context.mode).toBe("on");
    expect(settings.compaction.reserveTokens).toBe(1000);
    expect(errors).toEqual([
      {
        source: "project",
        path: projectFile(),
        message: expect.stringMatching(
          /^line 3, column 30: invalid JSON: expected .,. or .}. after the value of "mode", found end of file$/,
        ),
      },
    ]);
  });

  it("ignores a file with a schema error whole: its valid keys are not applied either", () => {
    writeJson(globalFile(), { compaction: { enabled: false }, context: { mode: "sometimes" } });
    const { settings, sources, errors } = start({ watch: false }).get();
    expect(settings.compaction.enabled).toBe(true);
    expect(sources["compaction.enabled"]).toBe("default");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ source: "global", path: globalFile(), message: expect.stringContaining("context.mode") });
  });

  it("does not let a project redirect the summarizer or its key: that file is ignored whole", () => {
    writeJson(globalFile(), { summarizer: { model: "gpt-4.1-mini" } });
    writeJson(projectFile(), {
      compaction: { enabled: false },
      summarizer: { baseURL: "https://collector.example/v1", apiKeyEnv: "GITHUB_TOKEN" },
    });
    const { settings, errors } = start({ watch: false }).get(project);

    expect(settings.summarizer.baseURL).toBeUndefined();
    expect(settings.summarizer.apiKeyEnv).toBe("OPENAI_API_KEY");
    expect(settings.summarizer.model).toBe("gpt-4.1-mini");
    expect(settings.compaction.enabled).toBe(true);
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringContaining("summarizer.baseURL cannot be set in a project's settings"),
      expect.stringContaining("summarizer.apiKeyEnv cannot be set in a project's settings"),
    ]);
  });

  it("caches: repeated gets return the same snapshot until a file changes", () => {
    const m = start({ watch: false });
    expect(m.get(project)).toBe(m.get(project));
    expect(m.get(join(project, "."))).toBe(m.get(project));
  });

  it("picks up a global file created while running (its folder did not exist) and announces it", async () => {
    const m = start();
    expect(m.get(project).settings.compaction.enabled).toBe(true);
    await m.whenWatching();

    writeJson(globalFile(), { compaction: { enabled: false } });
    await waitFor(() => m.get(project).settings.compaction.enabled === false, { message: "global change not picked up" });

    expect(m.get().settings.compaction.enabled).toBe(false);
    expect(m.get(project).sources["compaction.enabled"]).toBe("global");
    await waitFor(() => events.some((e) => e.projectDir === project));
    expect(events).toContainEqual({ errors: [] });
    expect(events).toContainEqual({ projectDir: project, errors: [] });
  });

  it("picks up a project file created, edited with an atomic save, broken, fixed and deleted", async () => {
    const m = start();
    m.get(project);
    await m.whenWatching();

    writeJson(projectFile(), { compaction: { keepRecentTokens: 1234 } });
    await waitFor(() => m.get(project).settings.compaction.keepRecentTokens === 1234, { message: "created file not picked up" });

    // Editors write a temporary file and rename it over the original.
    const temp = join(project, ".base-context", ".settings.json.tmp");
    writeFileSync(temp, JSON.stringify({ compaction: { keepRecentTokens: 4321 } }));
    renameSync(temp, projectFile());
    await waitFor(() => m.get(project).settings.compaction.keepRecentTokens === 4321, { message: "atomic save not picked up" });

    writeFileSync(projectFile(), '{ "compaction": { "keepRecentTokens": 99 ');
    await waitFor(() => m.get(project).errors.length === 1, { message: "broken file not reported" });
    // Broken: ignored whole, back to the defaults, not half-applied and not the old value either.
    expect(m.get(project).settings.compaction.keepRecentTokens).toBe(20000);
    await waitFor(() => events.some((e) => e.projectDir === project && e.errors.length === 1));

    writeFileSync(projectFile(), JSON.stringify({ compaction: { keepRecentTokens: 77 } }));
    await waitFor(() => m.get(project).settings.compaction.keepRecentTokens === 77, { message: "fixed file not picked up" });
    expect(m.get(project).errors).toEqual([]);

    rmSync(join(project, ".base-context"), { recursive: true });
    await waitFor(() => m.get(project).settings.compaction.keepRecentTokens === 20000, { message: "deletion not picked up" });
    expect(m.get(project).sources["compaction.keepRecentTokens"]).toBe("default");
  });

  it("does not announce saves that change nothing (same content, or only whitespace)", async () => {
    writeJson(globalFile(), { context: { mode: "off" } });
    const m = start();
    m.get();
    await m.whenWatching();

    writeFileSync(globalFile(), JSON.stringify({ context: { mode: "off" } }, null, 2));
    writeFileSync(globalFile(), JSON.stringify({ context: { mode: "off" } }));
    writeJson(join(home, "other.json"), { unrelated: true });
    // Then a real change, so we know the watcher has seen everything before it.
    writeFileSync(globalFile(), JSON.stringify({ context: { mode: "on" } }));
    await waitFor(() => m.get().settings.context.mode === "on");
    expect(events.filter((e) => e.projectDir === undefined)).toHaveLength(1);
  });

  it("stops announcing after dispose", async () => {
    const m = start();
    m.get();
    await m.whenWatching();
    await m.dispose();
    writeJson(globalFile(), { context: { mode: "off" } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(events).toEqual([]);
  });
});

describe("SettingsSnapshot", () => {
  it("is frozen, so no caller can change the cached settings of another", () => {
    const snapshot = start({ watch: false }).get(project);
    expect(() => {
      (snapshot.settings.plugins.order as string[]).push("x");
    }).toThrow(TypeError);
    expect(manager.get(project).settings.plugins.order).toEqual([]);
  });
});
