/**
 * `base-context doctor`: checks what the daemon needs — the database, the settings files, the
 * tokenizer, the summarizer (and its endpoint), the plugins — and says what to try for each
 * problem. Changes nothing.
 */
import { resolve } from "node:path";
import { baseContextHome } from "../paths.js";
import { storeLocation, StoreUrlError } from "../sessions/store-display.js";
import { SettingsManager } from "../settings/index.js";
import { VERSION } from "../version.js";
import { flag, integerOption, JSON_OPTION, stringOption, type CommandSpec } from "./args.js";
import type { CheckResult, CheckStatus } from "./doctor-checks.js";
import { displayPath, plural, processIo, quietDaemonLogs, startProgress, styleFor, writeJson, type CliIo, type Style } from "./output.js";
import { storeFailure, withDaemon } from "./open-daemon.js";
import { EXIT, runCommand } from "./run.js";
import { settingsFiles } from "./settings.js";

export const DOCTOR_SPEC: CommandSpec = {
  name: "doctor",
  summary: "check the database, settings, tokenizer, summarizer and plugins",
  description:
    "Each problem comes with what to try. The database is the SQLite file, or the PostgreSQL server of\n" +
    "BASE_CONTEXT_STORE_URL or store.url: its connection, schema version and round-trip latency.\n" +
    "The summarizer's endpoint is contacted (GET <baseURL>/models,\n" +
    "with the key from the environment) only when a model is configured and --offline is not given.",
  options: [
    { name: "project", value: "dir", description: "check with this project's settings and plugins (default: the current folder)" },
    { name: "offline", description: "do not contact the summarizer's endpoint" },
    { name: "timeout", value: "ms", description: "how long to wait for the endpoint (default 5000)" },
    { name: "context-window", value: "n", description: "check the compaction settings against a model's window of n tokens" },
    JSON_OPTION,
  ],
  exitStatus: "Exit status: 0 nothing failed (warnings allowed), 1 a check failed, 2 usage error.",
};

const DEFAULT_TIMEOUT_MS = 5000;

export function doctorCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(DOCTOR_SPEC, argv, io, async (args) => {
    quietDaemonLogs();
    const projectDir = resolve(stringOption(args, "project") ?? process.cwd());
    const timeoutMs = integerOption(args, "timeout", { min: 1, max: 600_000 }) ?? DEFAULT_TIMEOUT_MS;
    const contextWindow = integerOption(args, "context-window", { min: 1, max: 100_000_000 });
    const home = baseContextHome(io.env);
    const { checkPlugins, checkSettings, checkTokenizer } = await import("./doctor-checks.js");
    const { checkSummarizer } = await import("./doctor-summarizer.js");
    const { checkStore } = await import("./doctor-store.js");
    const progress = startProgress(io, "checking the database");
    const checks: CheckResult[] = [];
    let store: { engine: string; location: string } | undefined;
    try {
      const manager = new SettingsManager({ env: io.env, watch: false });
      const global = manager.get();
      const project = manager.get(projectDir);
      await manager.dispose();
      // The store the daemon would open: BASE_CONTEXT_STORE_URL, else store.url, else the SQLite file.
      try {
        const location = storeLocation({ env: io.env, settingsUrl: global.settings.store.url });
        store = { engine: location.engine, location: location.display };
        checks.push(...(await checkStore(location, timeoutMs)));
      } catch (error) {
        if (!(error instanceof StoreUrlError)) throw error;
        checks.push({ name: "database", status: "fail", summary: error.message, fixes: [storeFailure(error).hints[0]!] });
      }
      checks.push(checkSettings(project.errors, settingsFiles(manager.globalPath, projectDir, project.errors)));
      const { checkCompactionWindow } = await import("./doctor-window.js");
      checks.push(checkCompactionWindow(project.settings, project.sources, contextWindow));

      progress.update("loading the tokenizer");
      // The daemon counts with the global settings' tokenizer (counts must be comparable across projects).
      checks.push(await checkTokenizer(global.settings.tokens));

      progress.update("checking the summarizer");
      checks.push(
        await checkSummarizer(project.settings.summarizer, {
          env: io.env,
          offline: flag(args, "offline"),
          timeoutMs,
          settingsPath: displayPath(manager.globalPath),
          userNamedModel: global.settings.summarizer.model !== undefined,
          providerSetByUser: global.sources["summarizer.provider"] === "global",
        }),
      );

      progress.update("starting the plugins");
      checks.push(await checkPlugins(home, projectDir, project.settings));
      const { checkPluginSessions } = await import("./doctor-plugin-sessions.js");
      const sessionsCheck = await withDaemon(io, (daemon) => checkPluginSessions(daemon, projectDir, home)).catch(() => undefined);
      if (sessionsCheck !== undefined) checks.push(sessionsCheck);
      const { claudeCodeCheck } = await import("./claude-code.js");
      checks.push(claudeCodeCheck(io.env, projectDir));
    } finally {
      progress.done();
    }

    const failed = checks.some((check) => check.status === "fail");
    if (flag(args, "json")) {
      writeJson(io, { version: VERSION, home, projectDir, ...(store ? { store } : {}), ok: !failed, checks });
    } else {
      printReport(io, checks, home);
    }
    return failed ? EXIT.failure : EXIT.ok;
  });
}

function printReport(io: CliIo, checks: readonly CheckResult[], home: string): void {
  const style = styleFor(io.stdout, io.env);
  io.stdout.write(`${style.bold("base-context doctor")} · version ${VERSION} · home ${displayPath(home)}\n\n`);
  const nameWidth = Math.max(...checks.map((check) => check.name.length));
  for (const check of checks) {
    io.stdout.write(`${statusLabel(check.status, style)}  ${check.name.padEnd(nameWidth)}  ${check.summary}\n`);
    for (const fix of check.fixes) io.stdout.write(`      ${" ".repeat(nameWidth)}  ${style.dim("→")} ${fix}\n`);
  }
  const failed = checks.filter((check) => check.status === "fail").length;
  const warned = checks.filter((check) => check.status === "warn").length;
  const verdict =
    failed > 0
      ? style.red(`${plural(failed, "check")} failed${warned > 0 ? `, ${plural(warned, "warning")}` : ""}.`)
      : warned > 0
        ? style.yellow(`No failures, ${plural(warned, "warning")}.`)
        : style.green("Everything looks fine.");
  io.stdout.write(`\n${verdict}\n`);
}

function statusLabel(status: CheckStatus, style: Style): string {
  const padded = status.padEnd(4);
  if (status === "ok") return style.green(padded);
  if (status === "warn") return style.yellow(padded);
  if (status === "fail") return style.red(padded);
  return style.dim(padded);
}
