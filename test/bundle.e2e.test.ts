/**
 * The shipped artefacts: `packages/daemon/bin/base-context.js` runs the esbuild bundles
 * (dist/bundle/daemon.cjs for `serve`, run from V8's code cache; dist/bundle/cli.js for the rest;
 * docs/architecture.md#start-path-and-bundles).
 * The whole end-to-end suite runs them (support/daemon.ts's DAEMON_MAIN); this file checks by name
 * the parts loaded on first use: the OpenAI client (a compaction with a model) and the
 * plugin host with its worker scripts (a plugin's hook), each named in the debug log when loaded;
 * and the Claude Code hook's bundle (dist/bundle/claude-code-hook.cjs), run from its code cache too.
 */
import { CompactionRun, SessionCreate } from "@base-context/protocol";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { appendAll, assistant, toolResult, user } from "./fixtures/e2e.js";
import { DAEMON_BIN, startDaemon } from "./support/daemon.js";
import { onPostgres } from "./support/engine.js";
import { defaultSummary, reply, useFakeOpenAI } from "./support/fake-openai.js";
import { compact, compactableSession, hookPlugin, replaceSummary, usePluginDaemons } from "./support/plugins.js";
import { runCli } from "./support/run-cli.js";
import { withNodeOptions } from "./support/test-node.js";

const BUNDLES = join(dirname(DAEMON_BIN), "..", "dist", "bundle");
const EXAMPLE = new URL("../examples/sessions/refactor-auth.jsonl", import.meta.url).pathname;
const EXAMPLE_ID = "5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13";
const BUILTINS_AT_REPLY = new URL("./support/builtins-at-reply.cjs", import.meta.url).pathname;
/** bench/lib's generator of Claude Code transcripts (plain JavaScript, shared with the hook's bench). */
const TRANSCRIPT_GENERATOR = "../bench/lib/claude-code-transcript.mjs";

const daemons = usePluginDaemons();
const fake = useFakeOpenAI();

describe("the bundles", () => {
  it("are one file per entry point with a source map each", () => {
    for (const name of ["daemon.cjs", "cli.js", "claude-code-hook.cjs"]) {
      const bundle = join(BUNDLES, name);
      expect(existsSync(bundle), name).toBe(true);
      expect(readFileSync(bundle, "utf8")).toContain(`//# sourceMappingURL=${name}.map`);
      const map = JSON.parse(readFileSync(`${bundle}.map`, "utf8")) as { sources: string[] };
      expect(map.sources.some((source) => source.endsWith("src/daemon.ts"))).toBe(true);
    }
  });
});

describe("the bundled daemon (base-context serve)", () => {
  it("compacts with a model through the lazily loaded OpenAI client, and says when it loaded it", async () => {
    fake.setHandler((request) => reply.text(defaultSummary(request.body)));
    const { client, project, d } = await daemons.start({
      main: DAEMON_BIN,
      settings: { summarizer: { provider: "openai", baseURL: fake.baseURL, model: "fake-summarizer", maxRetries: 0 } },
      env: { OPENAI_API_KEY: "test-key", BASE_CONTEXT_LOG: "debug" },
    });
    const { session } = await client.request(SessionCreate, { cwd: project });
    await appendAll(client, session.id, [
      user("Rename parseConfig to loadConfig everywhere."),
      assistant("Reading the config module first.", { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "src/config.ts" } }] }),
      toolResult("call_1", "read", "export function parseConfig() {}"),
      assistant("Renamed it in src/config.ts and updated 3 call sites."),
      user("Now run the tests."),
    ]);
    expect(d.stderr()).not.toContain("loaded the OpenAI client");

    const result = await client.request(CompactionRun, { sessionId: session.id });

    expect(result).toMatchObject({ status: "committed", summarizer: "openai:fake-summarizer" });
    expect(fake.chatRequests().length).toBeGreaterThan(0);
    expect(d.stderr()).toMatch(/loaded the OpenAI client/);
  });

  it("runs a plugin's hook through the lazily started plugin host (its worker scripts found next to the bundle)", async () => {
    const { client, project, d } = await daemons.start({
      main: DAEMON_BIN,
      plugins: { mine: hookPlugin({ compact: replaceSummary("## Goal\nby the bundled daemon's plugin", { by: "mine" }) }) },
      env: { BASE_CONTEXT_LOG: "debug" },
    });
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result).toMatchObject({ status: "committed", summarizer: "plugin:global:mine" });
    expect(result.compaction?.summary).toBe("## Goal\nby the bundled daemon's plugin");
    expect(d.stderr()).toMatch(/loaded the plugin host/);
  });

  // Each would load before a start's first answers, for code that runs later if ever
  // (docs/architecture.md#start-path-and-bundles): child_process (the fd-1 helper over a socket),
  // worker_threads (checkpoints, token counting), fs/promises (export, import). node:crypto is
  // loaded by vscode-jsonrpc as it loads (deferring it gained nothing measurable: docs/design.md).
  it("answers initialize and builds itself without loading child_process, worker_threads or fs/promises", async () => {
    const home = daemons.dirs.make("bc-bundle-builtins-");
    // The first start writes the code cache if there is none yet; the second runs from it, as a client's daemons do.
    for (const run of ["first start", "second start"]) {
      const env = { BASE_CONTEXT_LOG: "debug", NODE_OPTIONS: withNodeOptions(`--require ${BUILTINS_AT_REPLY}`) };
      const d = await startDaemon({ home, main: DAEMON_BIN, env });
      await d.client.request(SessionCreate, { cwd: "/home/me/project" });
      const said = d.stderr();
      await d.close();
      const line = /^builtins at reply: (.*)$/m.exec(said);
      expect(line, `${run}: ${said}`).not.toBeNull();
      const builtins = line![1]!.split(" ");
      expect(builtins, run).toContain("net"); // it did list them
      expect(builtins, run).not.toContain("child_process");
      // Nor once it has built itself after the reply, before serving the first request (on
      // PostgreSQL the store itself needs a worker thread).
      const built = /^builtins when built: (.*)$/m.exec(said)![1]!.split(" ");
      const notYet = onPostgres ? ["child_process", "fs/promises"] : ["child_process", "worker_threads", "fs/promises"];
      for (const later of notYet) expect(built, run).not.toContain(later);
      if (run === "second start") expect(said).toContain("start: code cache used");
    }
  });
});

describe("the bundled daemon's code cache", () => {
  // A first daemon that only answered `initialize` (a client that stopped it, a bench) caches its
  // start; what its successors compile for their requests (context/build, writing a large answer)
  // would be compiled again by each of them unless one of them writes the cache again, once.
  it("is written again, once, by the first daemon that serves requests from a cache covering the start only", async () => {
    // A copy of the daemon's bundle with a cache of its own (beside it), which the other tests'
    // daemons (this file runs in both projects, maybe at once) do not write. Beside dist/bundle,
    // so that the bundle finds the same compiled files and packages.
    const copy = mkdtempSync(join(BUNDLES, "..", "bundle-cache-test-"));
    try {
      for (const file of ["daemon.cjs", "serve.cjs", "worker.cjs"]) copyFileSync(join(BUNDLES, file), join(copy, file));
      const main = join(copy, "bin.cjs");
      writeFileSync(main, `"use strict";\nrequire("./serve.cjs");\n`);
      const home = daemons.dirs.make("bc-bundle-cache-");
      const run = async (requests: boolean): Promise<string> => {
        const d = await startDaemon({ home, main, env: { BASE_CONTEXT_LOG: "debug" } });
        if (requests) await d.client.request(SessionCreate, { cwd: "/home/me/project" });
        await d.close();
        return d.stderr();
      };
      const first = await run(false);
      expect(first).toContain("start: code cache absent");
      expect(first).toMatch(/start: code cache written \(\d+ KiB, covering the start\)/);

      const second = await run(true);
      expect(second).toContain("start: code cache used (covering the start only)");
      expect(second).toMatch(/start: code cache written \(\d+ KiB, covering the start and requests\)/);

      for (const requests of [true, false]) {
        const later = await run(requests);
        expect(later).toContain("start: code cache used (covering the start and requests)");
        expect(later).not.toContain("code cache written");
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});

describe("the bundled Claude Code hook (base-context claude-code hook)", () => {
  // Claude Code waits for it at every compaction: it runs from a bundle of its own and its code cache, as serve does.
  it("runs from its own bundle, whose code cache is written once it has answered and used by the next runs", async () => {
    const copy = mkdtempSync(join(BUNDLES, "..", "bundle-hook-cache-test-"));
    try {
      for (const file of ["claude-code-hook.cjs", "hook.cjs", "worker.cjs"]) copyFileSync(join(BUNDLES, file), join(copy, file));
      const main = join(copy, "bin.cjs");
      writeFileSync(main, `"use strict";\nrequire("./hook.cjs");\n`);
      const home = daemons.dirs.make("bc-bundle-hook-");
      const transcript = join(home, "transcript.jsonl");
      type Generator = { writeClaudeTranscript(path: string, options: { bytes: number }): unknown };
      const generator = (await import(TRANSCRIPT_GENERATOR)) as Generator;
      generator.writeClaudeTranscript(transcript, { bytes: 20_000 });
      const input = JSON.stringify({ session_id: "bundle-hook", transcript_path: transcript, hook_event_name: "PreCompact", trigger: "auto" });
      const run = () => runCli(["claude-code", "hook"], { home, main, input, env: { BASE_CONTEXT_LOG: "debug" } });
      const first = await run();
      expect(first.code).toBe(0);
      expect(first.stderr).toContain("claude-code hook: code cache absent");
      expect(first.stderr).toMatch(/claude-code hook: code cache written \(\d+ KiB, covering the start and requests\)/);
      expect(first.stdout).toMatch(/^Base Context read this session's transcript/);
      const second = await run();
      expect(second.stderr).toContain("claude-code hook: code cache used");
      expect(second.stderr).not.toContain("code cache written");
      expect(second.stdout).toBe(first.stdout);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});

describe("the bundled CLI", () => {
  it("prints its help, and shows an imported session", async () => {
    const home = daemons.dirs.make("bc-bundle-cli-");
    const help = await runCli(["--help"], { home, main: DAEMON_BIN });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: base-context <command> \[options\]/);
    // The bundles report the package's version (read from package.json beside dist/).
    const version = await runCli(["--version"], { home, main: DAEMON_BIN });
    const pkg = JSON.parse(readFileSync(join(BUNDLES, "..", "..", "package.json"), "utf8")) as { version: string };
    expect(version.stdout.trim()).toBe(pkg.version);

    const imported = await runCli(["import", EXAMPLE], { home, main: DAEMON_BIN });
    expect(imported.code, imported.stderr).toBe(0);
    const shown = await runCli(["show", EXAMPLE_ID.slice(0, 8), "--brief"], { home, main: DAEMON_BIN });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("express-session");
    expect(shown.stdout).toMatch(/tokens/);
  });
});
