/**
 * `base-context settings` (effective values and where each came from, invalid files reported) and
 * `base-context doctor` (database, settings, tokenizer, summarizer endpoint, plugins), with
 * the exit status scripts rely on.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";
import { onPostgres } from "./support/engine.js";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

function writeJson(path: string, value: unknown): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, JSON.stringify(value, null, 2));
}

interface SettingsJson {
  projectDir?: string;
  files: { source: string; path: string; exists: boolean; valid: boolean }[];
  settings: { compaction: { reserveTokens: number; keepRecentTokens: number; enabled: boolean } };
  sources: Record<string, string>;
  errors: { source: string; path: string; message: string }[];
}

describe("settings", () => {
  it("never prints store.url's password, in text or JSON", async () => {
    const home = dirs.make("bc-settings-store-");
    writeJson(join(home, "settings.json"), { store: { url: "postgres://team:s3cret-pw@db.example:5432/sessions" } });
    for (const args of [["settings", "--global"], ["settings", "--global", "--json"]]) {
      const run = await runCli(args, { home });
      expect(run.code).toBe(0);
      expect(run.stdout).not.toContain("s3cret-pw");
      expect(run.stdout).toContain("postgres://team:***@db.example:5432/sessions");
    }
  });

  it("shows every key with its value and where it came from: default, global or project", async () => {
    const home = dirs.make("bc-settings-home-");
    const project = dirs.make("bc-settings-project-");
    writeJson(join(home, "settings.json"), { compaction: { reserveTokens: 8000 } });
    writeJson(join(project, ".base-context", "settings.json"), { compaction: { keepRecentTokens: 5000, prune: { minTokens: 2000 } } });

    const text = await runCli(["settings", "--project", project], { home });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^compaction\.enabled\s+true\s+default$/m);
    expect(text.stdout).toMatch(/^compaction\.reserveTokens\s+8000\s+global$/m);
    expect(text.stdout).toMatch(/^compaction\.keepRecentTokens\s+5000\s+project$/m);
    expect(text.stdout).toMatch(/^summarizer\.baseURL\s+\(not set\)\s+default$/m);
    // The nested prune group, key by key.
    expect(text.stdout).toMatch(/^compaction\.prune\.minTokens\s+2000\s+project$/m);
    expect(text.stdout).toMatch(/^compaction\.prune\.protectTokens\s+40000\s+default$/m);
    expect(text.stdout).toMatch(new RegExp(`global\\s+${join(home, "settings.json")}\\s+applied`));

    const json = JSON.parse((await runCli(["settings", "--project", project, "--json"], { home })).stdout) as SettingsJson;
    expect(json.settings.compaction).toEqual({
      enabled: true,
      reserveTokens: 8000,
      keepRecentTokens: 5000,
      prune: { enabled: true, protectTokens: 40000, minTokens: 2000, minSavings: 20000 },
    });
    expect(json.sources).toMatchObject({
      "compaction.enabled": "default",
      "compaction.reserveTokens": "global",
      "compaction.keepRecentTokens": "project",
    });
    expect(json.files.map((file) => [file.source, file.exists, file.valid])).toEqual([
      ["global", true, true],
      ["project", true, true],
    ]);

    const globalOnly = JSON.parse((await runCli(["settings", "--global", "--json"], { home })).stdout) as SettingsJson;
    expect(globalOnly.projectDir).toBeUndefined();
    expect(globalOnly.settings.compaction.keepRecentTokens).toBe(20000);
  });

  it("reports an invalid file, ignores it whole, and exits 1", async () => {
    const home = dirs.make("bc-settings-home-");
    const project = dirs.make("bc-settings-project-");
    const projectFile = join(project, ".base-context", "settings.json");
    mkdirSync(join(project, ".base-context"));
    writeFileSync(projectFile, '{ "compaction": { "keepRecentTokens": "lots" } }');
    writeJson(join(home, "settings.json"), { summarizer: { model: "gpt-4.1-mini" } });

    const run = await runCli(["settings", "--project", project], { home });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`project\\s+${projectFile}\\s+ignored: invalid`));
    expect(run.stdout).toContain(`project ${projectFile}:`);
    expect(run.stdout).toContain("keepRecentTokens");
    expect(run.stdout).toMatch(/^compaction\.keepRecentTokens\s+20000\s+default$/m);
    expect(run.stdout).toMatch(/^summarizer\.model\s+"gpt-4\.1-mini"\s+global$/m);
  });

  it("does not let a project send the conversation elsewhere (summarizer.baseURL is a global-only key)", async () => {
    const home = dirs.make("bc-settings-home-");
    const project = dirs.make("bc-settings-project-");
    writeJson(join(project, ".base-context", "settings.json"), { summarizer: { baseURL: "https://evil.example/v1" } });
    const json = JSON.parse((await runCli(["settings", "--project", project, "--json"], { home })).stdout) as SettingsJson & {
      settings: { summarizer: { baseURL?: string } };
    };
    expect(json.settings.summarizer.baseURL).toBeUndefined();
    expect(json.errors).toHaveLength(1);
    expect(json.errors[0]).toMatchObject({ source: "project" });
  });

  it("refuses --project together with --global (exit 2)", async () => {
    const run = await runCli(["settings", "--global", "--project", "."], { home: dirs.make("bc-settings-home-") });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("give --project or --global, not both");
  });
});

/** A stand-in OpenAI-compatible endpoint answering GET /v1/models. */
let endpoint: Server | undefined;
afterEach(async () => {
  await new Promise<void>((done) => (endpoint ? endpoint.close(() => done()) : done()));
  endpoint = undefined;
});
async function startModelsEndpoint(status: number, models: string[] = []): Promise<{ baseURL: string; seenKeys: string[] }> {
  const seenKeys: string[] = [];
  endpoint = createServer((request, response) => {
    seenKeys.push(String(request.headers.authorization));
    response.writeHead(request.url === "/v1/models" ? status : 404, { "content-type": "application/json" });
    response.end(
      JSON.stringify(
        status === 200 ? { object: "list", data: models.map((id) => ({ id, object: "model" })) } : { error: { message: "nope" } },
      ),
    );
  });
  await new Promise<void>((done) => endpoint!.listen(0, "127.0.0.1", done));
  return { baseURL: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1`, seenKeys };
}

/** A URL nobody listens on: a port that was free a moment ago, so connecting is refused at once. */
async function closedPortURL(): Promise<string> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return `http://127.0.0.1:${port}/v1`;
}

interface DoctorJson {
  ok: boolean;
  checks: { name: string; status: string; summary: string; fixes: string[] }[];
}
const checkNamed = (report: DoctorJson, name: string) => report.checks.find((check) => check.name === name)!;

describe("doctor", () => {
  it("checks database, settings, tokenizer, summarizer and plugins on a fresh home (exit 0)", async () => {
    const home = dirs.make("bc-doctor-");
    const run = await runCli(["doctor", "--project", home], { home });
    expect(run.code, run.stderr).toBe(0);
    if (onPostgres) expect(run.stdout).toMatch(/^ok\s+database\s+PostgreSQL postgres:\/\/.*, connected$/m);
    else expect(run.stdout).toMatch(/^ok\s+database\s+SQLite file .*sessions\.db does not exist yet; it is created on first use$/m);
    expect(run.stdout).toMatch(/^ok\s+settings\s+global none, project none$/m);
    expect(run.stdout).toMatch(/^ok\s+tokenizer\s+o200k_base \(exact\): "Hello, world!" = \d+ tokens/m);
    expect(run.stdout).toMatch(
      /^ok\s+summarizer\s+auto: the connected client's own model when it offers one \(model\/complete\), else extractive \(built in, offline: nothing leaves this machine\); no model host is contacted$/m,
    );
    expect(run.stdout).toMatch(/^ok\s+plugins\s+none installed$/m);
    expect(run.stdout).toMatch(/^ok\s+compaction\s+reserve and kept part left unset: the reserve is capped at a quarter of the window a client gives, the kept part is a quarter of it/m);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("Everything looks fine.");
  });

  it("checks the compaction settings against a model's window: a reserve set too large for it is a warning", async () => {
    const home = dirs.make("bc-doctor-window-");
    writeFileSync(join(home, "settings.json"), JSON.stringify({ compaction: { reserveTokens: 16_384 } }));
    const general = await runCli(["doctor", "--offline", "--project", home], { home });
    expect(general.stdout).toMatch(/^ok\s+compaction\s+reserve 16,384, set in global settings; kept part left unset .*: they fit windows of 21,846 tokens or more/m);
    const small = await runCli(["doctor", "--offline", "--project", home, "--context-window", "8000"], { home });
    expect(small.code, small.stderr).toBe(0);
    expect(small.stdout).toMatch(/^warn\s+compaction\s+with a 8,000-token window: compacts above -8,384 tokens .*: the compaction settings cannot fit/m);
    const roomy = await runCli(["doctor", "--offline", "--project", home, "--context-window", "32000"], { home });
    expect(roomy.stdout).toMatch(/^ok\s+compaction\s+with a 32,000-token window: compacts above 15,616 tokens \(reserve 16,384, set in global settings\) and keeps at least 8,000$/m);
  });

  // About the SQLite file under the home: PostgreSQL has no file to damage (doctor checks its connection instead).
  it.skipIf(onPostgres)("fails on a corrupt database and says to move it away or use BASE_CONTEXT_HOME (exit 1)", async () => {
    const home = dirs.make("bc-doctor-");
    writeFileSync(join(home, "sessions.db"), "garbage ".repeat(1000));
    const run = await runCli(["doctor", "--offline", "--project", home], { home });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^fail\s+database\s+the session database .* is damaged or is not a Base Context database/m);
    expect(run.stdout).toContain(`mv "${join(home, "sessions.db")}" "${join(home, "sessions.db")}.broken"`);
    expect(run.stdout).toContain("BASE_CONTEXT_HOME");
    expect(run.stdout).toContain("1 check failed.");
  });

  it("reaches a configured model's endpoint with the key, and says when it does not offer the model", async () => {
    const { baseURL, seenKeys } = await startModelsEndpoint(200, ["gpt-4o-mini", "other-model"]);
    const home = dirs.make("bc-doctor-");
    writeJson(join(home, "settings.json"), { summarizer: { provider: "openai", baseURL, model: "gpt-4o-mini" } });
    const good = JSON.parse(
      (await runCli(["doctor", "--json", "--project", home], { home, env: { OPENAI_API_KEY: "sk-doctor" } })).stdout,
    ) as DoctorJson;
    expect(checkNamed(good, "summarizer")).toMatchObject({
      status: "ok",
      summary: `model gpt-4o-mini at ${baseURL}: reachable, key accepted, model offered`,
    });
    expect(seenKeys).toEqual(["Bearer sk-doctor"]);

    writeJson(join(home, "settings.json"), { summarizer: { provider: "openai", baseURL, model: "missing-model" } });
    const missing = await runCli(["doctor", "--project", home], { home, env: { OPENAI_API_KEY: "sk-doctor" } });
    expect(missing.code).toBe(0); // fallback is on: compactions still work
    expect(missing.stdout).toMatch(/^warn\s+summarizer\s+model missing-model at .*: reachable, but it does not offer missing-model/m);
    expect(missing.stdout).toContain("gpt-4o-mini, other-model");
    expect(missing.stdout).not.toContain("sk-doctor");
  });

  it("with a key but no model named, warns that the key alone no longer selects a model, and says how to restore it", async () => {
    const home = dirs.make("bc-doctor-");
    const run = await runCli(["doctor", "--offline", "--json", "--project", home], { home, env: { OPENAI_API_KEY: "sk-old-habit" } });
    const check = checkNamed(JSON.parse(run.stdout) as DoctorJson, "summarizer");
    expect(check.status).toBe("warn");
    expect(check.summary).toContain("else extractive (built in, offline: nothing leaves this machine); no model host is contacted");
    expect(check.fixes[0]).toContain("$OPENAI_API_KEY is set, but a key alone no longer sends conversations to a model host");
    expect(check.fixes[0]).toContain('"summarizer": { "model": "gpt-4o-mini" }');

    // Choosing "auto" in the global settings acknowledges it: no more warning.
    writeJson(join(home, "settings.json"), { summarizer: { provider: "auto" } });
    const chosen = checkNamed(
      JSON.parse(
        (await runCli(["doctor", "--offline", "--json", "--project", home], { home, env: { OPENAI_API_KEY: "sk-old-habit" } })).stdout,
      ) as DoctorJson,
      "summarizer",
    );
    expect(chosen.status).toBe("ok");

    // Named in the global settings: auto says which model and host it uses after the client's.
    const { baseURL } = await startModelsEndpoint(200, ["named"]);
    writeJson(join(home, "settings.json"), { summarizer: { baseURL, model: "named" } });
    const named = JSON.parse(
      (await runCli(["doctor", "--json", "--project", home], { home, env: { OPENAI_API_KEY: "sk-doctor" } })).stdout,
    ) as DoctorJson;
    expect(checkNamed(named, "summarizer")).toMatchObject({
      status: "ok",
      summary: `auto: the connected client's own model when it offers one (model/complete), else model named at ${baseURL}: reachable, key accepted, model offered`,
    });
  });

  it("reports a refused key, and an unreachable endpoint as a failure when fallback is off", async () => {
    const { baseURL } = await startModelsEndpoint(401);
    const home = dirs.make("bc-doctor-");
    writeJson(join(home, "settings.json"), { summarizer: { provider: "openai", baseURL } });
    const refused = JSON.parse(
      (await runCli(["doctor", "--json", "--project", home], { home, env: { OPENAI_API_KEY: "sk-bad" } })).stdout,
    ) as DoctorJson;
    expect(checkNamed(refused, "summarizer").summary).toContain("the endpoint refused the key in $OPENAI_API_KEY (HTTP 401)");

    const closedURL = await closedPortURL();
    writeJson(join(home, "settings.json"), { summarizer: { provider: "openai", baseURL: closedURL, fallback: false } });
    const unreachable = await runCli(["doctor", "--project", home, "--timeout", "3000"], { home, env: { OPENAI_API_KEY: "sk-any" } });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toMatch(
      /^fail\s+summarizer\s+model gpt-4o-mini at http:\/\/127\.0\.0\.1:\d+\/v1: unreachable \(ECONNREFUSED\)/m,
    );
    expect(unreachable.stdout).toContain("Check summarizer.baseURL");

    const offline = JSON.parse(
      (await runCli(["doctor", "--offline", "--json", "--project", home], { home, env: { OPENAI_API_KEY: "sk-any" } })).stdout,
    ) as DoctorJson;
    expect(checkNamed(offline, "summarizer").status).toBe("skip");
  });

  it("reports a plugin that fails to load, with the file to fix (exit 1)", async () => {
    const home = dirs.make("bc-doctor-");
    const plugin = join(home, "plugins", "broken-plugin");
    writeJson(join(plugin, "package.json"), {
      name: "broken-plugin",
      version: "1.2.3",
      type: "module",
      baseContext: { apiVersion: 1, main: "index.js" },
    });
    writeFileSync(join(plugin, "index.js"), 'throw new Error("this plugin is broken on purpose");\n');
    const run = await runCli(["doctor", "--offline", "--json", "--project", home], { home });
    const report = JSON.parse(run.stdout) as DoctorJson;
    expect(run.code).toBe(1);
    const plugins = checkNamed(report, "plugins");
    expect(plugins.status).toBe("fail");
    expect(plugins.summary).toMatch(/broken-plugin@[\d.]+ error/);
    expect(plugins.fixes.join("\n")).toContain("this plugin is broken on purpose");
  });
});
